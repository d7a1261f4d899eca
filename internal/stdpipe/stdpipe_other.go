//go:build !unix

package stdpipe

import "os"

func pollable(f *os.File) (*os.File, func()) { return f, func() {} }
