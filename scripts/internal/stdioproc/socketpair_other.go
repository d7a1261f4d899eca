//go:build !unix

package stdioproc

import (
	"errors"
	"os"
)

func socketPair() (child, host *os.File, err error) {
	return nil, nil, errors.New("stdin a socket needs Unix socket pairs, which this system does not have")
}
