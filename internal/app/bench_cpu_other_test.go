//go:build !unix

package app_test

import "time"

// processCPU is not read here: the benchmarks report no CPU per call.
func processCPU() (time.Duration, bool) { return 0, false }
