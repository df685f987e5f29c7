//go:build !linux

package store

import "os"

// fdatasync flushes f to the disk.
func fdatasync(f *os.File) error { return f.Sync() }

// syncDir fsyncs a directory where the system can; not every one can sync
// a directory, so an error is ignored.
func syncDir(dir string) error {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
