//go:build windows

package fsx

import (
	"io/fs"
	"os"
	"syscall"
)

const oNonblock = 0

// IDOf cannot read the file index from a FileInfo on Windows; callers that
// need identity open the file and use IDOfFile.
func IDOf(fi fs.FileInfo) ID { return ID{} }

// IDOfFile returns volume serial + file index of an open file.
func IDOfFile(f *os.File) (ID, error) {
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &info); err != nil {
		return ID{}, err
	}
	id := ID{Dev: uint64(info.VolumeSerialNumber), Ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}
	if info.FileAttributes&syscall.FILE_ATTRIBUTE_DIRECTORY == 0 {
		id.Gen = info.LastWriteTime.Nanoseconds()
	} else {
		id.Gen = info.CreationTime.Nanoseconds()
	}
	return id, nil
}

func clearNonblock(*os.File) error { return nil }

// StatID returns the identity of the file path names, following symlinks.
// Windows keeps the file index only on handles, so the file is opened.
func StatID(path string) (ID, error) {
	f, err := os.Open(path)
	if err != nil {
		return ID{}, err
	}
	defer f.Close()
	return IDOfFile(f)
}
