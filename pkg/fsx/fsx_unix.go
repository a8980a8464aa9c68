//go:build unix

package fsx

import (
	"io/fs"
	"os"
	"syscall"
)

const oNonblock = syscall.O_NONBLOCK

// IDOf returns the identity recorded in fi (from Stat/Lstat/File.Stat).
func IDOf(fi fs.FileInfo) ID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id := ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
		switch {
		case fi.Mode().IsRegular():
			id.Gen = ctime(st)
		case fi.IsDir():
			id.Gen = statBirth(st)
		}
		return id
	}
	return ID{}
}

// IDOfFile returns the identity of an open file.
func IDOfFile(f *os.File) (ID, error) {
	fi, err := f.Stat()
	if err != nil {
		return ID{}, err
	}
	id := IDOf(fi)
	if fi.IsDir() && id.Gen == 0 {
		rc, err := f.SyscallConn()
		if err == nil {
			_ = rc.Control(func(fd uintptr) { id.Gen = birthFd(int(fd)) })
		}
	}
	return id, nil
}

func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) })
	if err != nil {
		return err
	}
	return serr
}

// StatID returns the identity of the file path names, following symlinks.
func StatID(path string) (ID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return ID{}, err
	}
	id := IDOf(fi)
	if fi.IsDir() && id.Gen == 0 {
		id.Gen = birthPath(path)
	}
	return id, nil
}
