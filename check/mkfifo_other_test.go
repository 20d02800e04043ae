//go:build !unix

package check_test

import "errors"

const havePipes = false

func mkfifo(string) error { return errors.New("no named pipes here") }
