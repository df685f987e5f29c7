package store

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the size it needs) to the disk, as SQLite
// does on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// syncDir fsyncs a directory, so the names in it are on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
