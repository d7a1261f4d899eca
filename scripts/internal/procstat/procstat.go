// Package procstat reads what the measuring scripts report of a process on
// Linux: resident memory and CPU time.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Memory reads VmRSS and VmHWM (peak RSS) of pid from /proc, in KiB.
func Memory(pid int) (rssKiB, hwmKiB int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read memory (Linux only): %w", err)
	}
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rssKiB = n
		case "VmHWM":
			hwmKiB, found = n, true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
	}
	return rssKiB, hwmKiB, nil
}

// CPU is the user+system CPU time pid has used, 0 when it cannot be read.
// /proc counts clock ticks of 10 ms: enough over thousands of calls.
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// RunTime is the time pid's live threads have spent on a CPU, from the
// scheduler's nanosecond counters (/proc/<pid>/task/*/schedstat), 0 when it
// cannot be read. Unlike CPU it resolves single calls; threads that have
// exited are not counted, so compare differences over a short span.
func RunTime(pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var total int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		total += n
	}
	return time.Duration(total)
}
