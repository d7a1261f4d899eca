//go:build !unix

package credential

import "errors"

// haveFIFO: there are no named pipes in the file system here.
const haveFIFO = false

func mkfifo(string) error { return errors.ErrUnsupported }
