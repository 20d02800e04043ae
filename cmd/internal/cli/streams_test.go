package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// countingWriter records each Write it gets.
type countingWriter struct {
	log    *bytes.Buffer
	writes int
	err    error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes++
	return w.log.Write(p)
}

// Stdout that is not a terminal is written in few large pieces, and what
// goes to stderr in between still lands after the stdout printed before
// it, as with 2>&1 into a CI log.
func TestStreamsBufferStdoutKeepOrder(t *testing.T) {
	var log bytes.Buffer
	out, errOut := &countingWriter{log: &log}, &countingWriter{log: &log}
	s := NewStreams(nil, out, errOut, false, false)
	for i := range 50 {
		fmt.Fprintf(s.Out, "line %d\n", i)
	}
	fmt.Fprintln(s.ErrOut, "rocmdoctor: an error")
	fmt.Fprintln(s.Out, "after")
	s.Warn("a warning")
	s.FlushWarnings()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := range 50 {
		want += fmt.Sprintf("line %d\n", i)
	}
	want += "rocmdoctor: an error\nafter\nrocmdoctor: warning: a warning\n"
	if log.String() != want {
		t.Errorf("interleaved output:\n%s\nwant:\n%s", log.String(), want)
	}
	if out.writes != 2 {
		t.Errorf("stdout took %d writes for 51 lines, want 2 (before the error, after)", out.writes)
	}
}

// A terminal sees each line as it is printed.
func TestStreamsTerminalUnbuffered(t *testing.T) {
	var log bytes.Buffer
	out := &countingWriter{log: &log}
	s := NewStreams(nil, out, &bytes.Buffer{}, true, true)
	fmt.Fprintln(s.Out, "one")
	if log.String() != "one\n" {
		t.Errorf("terminal output held back: %q", log.String())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
}

// Output that cannot be written is an error from Flush.
func TestStreamsFlushError(t *testing.T) {
	out := &countingWriter{log: &bytes.Buffer{}, err: errors.New("no space left on device")}
	s := NewStreams(nil, out, &bytes.Buffer{}, false, false)
	fmt.Fprintln(s.Out, "report")
	err := s.Flush()
	if err == nil || !strings.Contains(err.Error(), "writing the output: no space left on device") {
		t.Errorf("Flush = %v", err)
	}
}
