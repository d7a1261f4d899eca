// Package cputime reads the CPU time this process has used, user and
// system together, for benchmarks and the measuring scripts: on a shared
// machine wall time includes waiting for a core, CPU time does not.
package cputime

import "time"

// Self returns the CPU time the process has used so far; ok is false where
// the system does not say (then d is 0 and nothing should be reported).
func Self() (d time.Duration, ok bool) { return self() }
