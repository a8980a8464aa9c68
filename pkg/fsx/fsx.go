// Package fsx holds the few file-system primitives that every mutation and
// read in pi goes through: identity of files across processes, opening only
// regular files without blocking, and atomic replacement inside an os.Root.
package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

// ID identifies a file across processes (device + inode on Unix, volume +
// file index on Windows). The zero ID means "unknown".
// Gen tells apart two files that reuse the same freed inode number (ext4 and
// tmpfs hand it back at once): for regular files the inode change time, for
// directories the birth time where the platform records one (statx btime,
// st_birthtime), so adding entries to a directory does not change it but
// replacing the directory does.
type ID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	Gen int64  `json:"gen,omitempty"`
}

// IsZero reports whether the identity is unknown.
func (id ID) IsZero() bool { return id.Dev == 0 && id.Ino == 0 }

func (id ID) String() string { return fmt.Sprintf("%d:%d:%d", id.Dev, id.Ino, id.Gen) }

// ErrNotRegular is returned when a path names something other than a regular
// file (directory, FIFO, device, socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrIsDir is returned by OpenRegular for directories, so callers can suggest
// a directory tool.
var ErrIsDir = errors.New("is a directory")

// OpenRegular opens name inside root for reading without blocking on FIFOs
// or devices, then refuses anything that is not a regular file. The returned
// FileInfo comes from the open handle, so it describes what was opened.
func OpenRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fi, ErrIsDir
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, ErrNotRegular
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// WriteAtomic replaces name inside root with the bytes of r: a temp file in
// the same directory (O_EXCL), written, synced, chmod'ed to perm, renamed over
// name, then the directory is synced. Because the rename replaces the
// directory entry, a final-component symlink or hard link is replaced, never
// written through. On any error the temp file is removed and name is untouched.
func WriteAtomic(root *os.Root, name string, r io.Reader, perm fs.FileMode) (int64, error) {
	tmp, f, err := createTemp(root, name)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(tmp, perm)
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return n, err
	}
	SyncDir(root, path.Dir(name))
	return n, nil
}

// StaleTemp is how old a leftover temp file must be before a later write of
// the same target removes it (a writer killed with SIGKILL leaves one).
const StaleTemp = 10 * time.Minute

// createTemp opens the temp file for name: first the fixed name
// ".<base>.pi-tmp", so the leftover of a killed writer is found and removed
// by the next write of the same file once it is stale; when that name is in
// use by a live writer, a random suffix.
func createTemp(root *os.Root, name string) (string, *os.File, error) {
	dir, base := path.Dir(name), path.Base(name)
	fixed := path.Join(dir, "."+base+".pi-tmp")
	for i := 0; ; i++ {
		tmp := fixed
		if i > 1 {
			tmp = fixed + "-" + randHex(6)
		}
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return tmp, f, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 6 {
			return "", nil, err
		}
		if i == 0 {
			if fi, lerr := root.Lstat(fixed); lerr == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > StaleTemp {
				_ = root.Remove(fixed)
			}
		}
	}
}

// SyncDir fsyncs a directory so a rename in it is durable. Best effort: some
// platforms (Windows) cannot sync directories.
func SyncDir(root *os.Root, dir string) {
	if d, err := root.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
