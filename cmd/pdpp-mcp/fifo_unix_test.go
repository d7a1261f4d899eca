//go:build unix

package main

import "syscall"

// haveFIFO: named pipes exist here, so the refusal of one can be tested.
const haveFIFO = true

// mkfifo makes a named pipe at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
