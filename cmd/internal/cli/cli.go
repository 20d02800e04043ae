// Package cli is the output and error plumbing shared by every rocmdoctor
// command: IO streams, the table/plain/JSON renderers, colours and the exit
// codes.
package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rocmdoctor/rocmdoctor/finding"
)

// Exit codes, defined here and nowhere else.
const (
	ExitOK       = 0 // success, no findings at or above --fail-on
	ExitError    = 1 // an input could not be read, or the command failed
	ExitUsage    = 2 // bad flags or arguments
	ExitFindings = 3 // findings at or above --fail-on
)

// SchemaVersion is the version of every --json document rocmdoctor prints.
const SchemaVersion = 1

// UsageError marks bad flags or arguments (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// FindingsError reports that findings at or above the --fail-on threshold
// were printed (exit 3). Its message is a one-line summary.
type FindingsError struct{ Count int }

func (e *FindingsError) Error() string {
	return fmt.Sprintf("%d finding(s) at or above the --fail-on threshold", e.Count)
}

// ErrSilent reports a failure whose details were already printed; the
// command exits 1 without another message.
var ErrSilent = errors.New("silent error")

// ExitCode maps an error returned by a command to the process exit status.
func ExitCode(err error) int {
	var ue *UsageError
	var fe *FindingsError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &fe):
		return ExitFindings
	}
	return ExitError
}

// IOStreams holds the streams a command reads and writes, so tests can
// inject buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY  bool
	errTTY  bool
	colorOn bool
	width   int // the terminal's columns; 0: unknown, tables as wide as they are
	errW    int // stderr's, for progress lines

	warnMu   sync.Mutex
	warnings []string

	outBuf *bufio.Writer // Out when it buffers; see System
}

// System returns the process's streams. Call Flush before exiting.
func System() *IOStreams {
	s := NewStreams(os.Stdin, os.Stdout, os.Stderr,
		isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
		isatty.IsTerminal(os.Stderr.Fd()))
	if s.outTTY {
		s.width = ttyWidth(os.Stdout.Fd())
	}
	if s.errTTY {
		s.errW = ttyWidth(os.Stderr.Fd())
	}
	return s
}

// NewStreams is System over the given streams. Stdout that is not a terminal
// (a pipe, a CI log, a file) is buffered, so a tree of fifty lines is one
// write instead of fifty; a terminal sees every line as it is printed.
// Whatever goes to stderr first flushes stdout, so where both reach one
// log (2>&1) the lines keep the order they were printed in.
func NewStreams(in io.Reader, out, errOut io.Writer, outTTY, errTTY bool) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut, outTTY: outTTY, errTTY: errTTY}
	if !outTTY {
		s.outBuf = bufio.NewWriterSize(out, 8<<10)
		s.Out = s.outBuf
		s.ErrOut = stderrAfterOut{s.outBuf, errOut}
	}
	s.colorOn = s.outTTY && os.Getenv("NO_COLOR") == ""
	return s
}

// stderrAfterOut writes to stderr after flushing what stdout holds.
type stderrAfterOut struct {
	out *bufio.Writer
	err io.Writer
}

func (w stderrAfterOut) Write(p []byte) (int, error) {
	w.out.Flush() // a failure stays in the writer and Flush reports it
	return w.err.Write(p)
}

// Flush writes out what stdout holds; an error says the output is
// incomplete (a full disk, a closed pipe).
func (s *IOStreams) Flush() error {
	if s.outBuf == nil {
		return nil
	}
	if err := s.outBuf.Flush(); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// Test returns streams backed by buffers: stdin, stdout, stderr.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// Warn records a warning for FlushWarnings (once per distinct message).
// It is safe for concurrent use: library callbacks (rpath.Options.Warn)
// call it from a scan's workers, whose progress bar it must not break.
func (s *IOStreams) Warn(msg string) {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	if !slices.Contains(s.warnings, msg) {
		s.warnings = append(s.warnings, msg)
	}
}

// FlushWarnings prints the recorded warnings on ErrOut, after the
// command's output, and forgets them.
func (s *IOStreams) FlushWarnings() {
	s.warnMu.Lock()
	defer s.warnMu.Unlock()
	for _, w := range s.warnings {
		fmt.Fprintf(s.ErrOut, "rocmdoctor: warning: %s\n", EscapeMessage(w))
	}
	s.warnings = nil
}

// IsStderrTerminal reports whether stderr is a terminal (for progress bars).
func (s *IOStreams) IsStderrTerminal() bool { return s.errTTY }

// Progress writes a progress line, count and then item, on stderr over
// the previous one. A line longer than the terminal would wrap, and a
// wrapped line is not overwritten: the item is cut from its start ("…"
// and its end, which names the file), then the count from its end. An
// empty line clears it.
func (s *IOStreams) Progress(count, item string) {
	if count == "" && item == "" {
		fmt.Fprint(s.ErrOut, "\r\x1b[K")
		return
	}
	width := s.errW
	if width <= 0 {
		width = 80
	}
	c, it := []rune(count), []rune(item)
	room := width - 1 - len(c)
	switch {
	case room < 2:
		it = nil
		c = c[:min(len(c), width-1)]
	case len(it) > room:
		it = append([]rune("…"), it[len(it)-(room-1):]...)
	}
	fmt.Fprintf(s.ErrOut, "\r\x1b[K%s%s", string(c), string(it))
}

// SetErrWidth sets the width of the terminal on stderr (tests).
func (s *IOStreams) SetErrWidth(columns int) { s.errW = columns }

// SetTerminal overrides terminal detection (tests, --format table).
func (s *IOStreams) SetTerminal(out bool) { s.outTTY = out }

// ForceTables draws tables even where stdout is not a terminal (--format
// table into a log or a pager), fitted to $COLUMNS when it is set. Colour
// stays as --color and the terminal decided.
func (s *IOStreams) ForceTables() {
	if !s.outTTY {
		s.outTTY, s.width = true, columnsFromEnv()
	}
}

// SetWidth sets the terminal width tables are fitted to (0: none).
func (s *IOStreams) SetWidth(columns int) { s.width = columns }

// SetColor applies a --color value: "auto" keeps the detected setting
// (terminal and NO_COLOR unset), "always" and "never" force it.
func (s *IOStreams) SetColor(mode string) error {
	switch mode {
	case "", "auto":
		s.colorOn = s.outTTY && os.Getenv("NO_COLOR") == ""
	case "always":
		s.colorOn = true
	case "never":
		s.colorOn = false
	default:
		return &UsageError{fmt.Errorf("--color must be auto, always or never, not %q", mode)}
	}
	return nil
}

// Colors returns the colour helpers for stdout.
func (s *IOStreams) Colors() Colors { return Colors{on: s.colorOn} }

// Colors wraps text in ANSI escapes when enabled.
type Colors struct{ on bool }

func (c Colors) wrap(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c Colors) Red(s string) string    { return c.wrap("31", s) }
func (c Colors) Yellow(s string) string { return c.wrap("33", s) }
func (c Colors) Green(s string) string  { return c.wrap("32", s) }
func (c Colors) Bold(s string) string   { return c.wrap("1", s) }
func (c Colors) Dim(s string) string    { return c.wrap("2", s) }

// WriteJSON writes v as indented JSON followed by a newline. Result types
// carry their own schema_version field.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Table renders rows: a bordered table on a terminal, tab-separated lines
// with a header line otherwise (stable for scripts and golden files).
func (s *IOStreams) Table(header []string, rows [][]string) error {
	if !s.outTTY {
		// Buffered: a report of thousands of rows is a few writes, not
		// one per line.
		w := s.outBuf
		if w == nil {
			w = bufio.NewWriterSize(s.Out, 8<<10)
		}
		if len(header) > 0 {
			w.WriteString(strings.Join(header, "\t") + "\n")
		}
		for _, r := range rows {
			for i, c := range r {
				if i > 0 {
					w.WriteByte('\t')
				}
				w.WriteString(Escape(c))
			}
			w.WriteByte('\n')
		}
		return w.Flush()
	}
	esc := make([][]string, len(rows))
	for i, r := range rows {
		esc[i] = make([]string, len(r))
		for j, c := range r {
			esc[i][j] = Escape(c)
		}
	}
	rows = esc
	if s.width > 0 {
		header, rows = fitTable(header, rows, s.width)
	}
	t := tablewriter.NewTable(s.Out,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	if len(header) > 0 {
		h := make([]any, len(header))
		for i, x := range header {
			h[i] = x
		}
		t.Header(h...)
	}
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// KeyValues renders labelled values: a two-column table on a terminal,
// "key: value" lines otherwise.
func (s *IOStreams) KeyValues(kv [][2]string) error {
	if !s.outTTY {
		for _, p := range kv {
			if _, err := fmt.Fprintf(s.Out, "%s: %s\n", p[0], Escape(p[1])); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([][]string, len(kv))
	for i, p := range kv {
		rows[i] = []string{p[0], p[1]}
	}
	return s.Table(nil, rows)
}

// Emit prints v as JSON when asJSON is set and through render otherwise, then
// returns a *FindingsError when findings at or above failOn remain: the
// tail every report command shares.
func Emit(w io.Writer, asJSON bool, v any, render func() error, findings []finding.Finding, failOn string) error {
	if asJSON {
		if err := WriteJSON(w, v); err != nil {
			return err
		}
	} else if err := render(); err != nil {
		return err
	}
	if n := finding.CountAtLeast(findings, failOn); n > 0 {
		return &FindingsError{Count: n}
	}
	return nil
}

// EmitReadErrors is Emit for a report on several paths some of which could
// not be read: each of errs (naming its path) gets its line on stderr
// first, the rest is reported, and the status is then 1 unless findings
// make it 3.
func EmitReadErrors(s *IOStreams, asJSON bool, v any, render func() error, findings []finding.Finding, failOn string, errs []string) error {
	for _, e := range errs {
		fmt.Fprintf(s.ErrOut, "rocmdoctor: %s\n", e)
	}
	if err := Emit(s.Out, asJSON, v, render, findings, failOn); err != nil || len(errs) == 0 {
		return err
	}
	return ErrSilent
}
