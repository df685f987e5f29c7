package store

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the size it needs) to the disk, as SQLite
// does on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
