//go:build unix

package deliver_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used, and
// whether it could be read. On PostgreSQL the server's own CPU is not in it.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
