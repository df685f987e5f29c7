//go:build !unix

package deliver_test

import "time"

// processCPU cannot be read here.
func processCPU() (time.Duration, bool) { return 0, false }
