//go:build !unix

package symcheck_test

import "errors"

const havePipes = false

func mkfifo(string) error { return errors.New("no named pipes here") }
