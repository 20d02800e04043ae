package inflate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// asyncInput is a stream large enough for the asynchronous writer and
// several output buffers: mixed text and noise at level 1.
func asyncInput(t *testing.T) (data, comp []byte) {
	rng := rand.New(rand.NewSource(3))
	for len(data) < 3*outBuf {
		if rng.Intn(2) == 0 {
			data = append(data, bytes.Repeat([]byte("ELF symbol table .dynstr "), 1+rng.Intn(200))...)
		} else {
			noise := make([]byte, rng.Intn(8000))
			rng.Read(noise)
			data = append(data, noise...)
		}
	}
	comp = deflate(t, data, 1)
	if len(comp) < asyncMin {
		t.Fatalf("%d compressed bytes: too few for the asynchronous writer", len(comp))
	}
	return data, comp
}

// slowWriter checks that a buffer it was given does not change while it
// is being written: it keeps a copy, waits, and compares.
type slowWriter struct {
	out     bytes.Buffer
	writes  int
	changed int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	before := append([]byte(nil), p...)
	time.Sleep(20 * time.Millisecond)
	if !bytes.Equal(before, p) {
		w.changed++
	}
	w.writes++
	w.out.Write(before)
	return len(p), nil
}

func TestAsyncWriterKeepsBuffersWhileWriting(t *testing.T) {
	data, comp := asyncInput(t)
	var w slowWriter
	idx, err := Decode(&w, bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	if w.changed > 0 {
		t.Fatalf("%d of %d buffers changed while they were being written", w.changed, w.writes)
	}
	if w.writes < 3 {
		t.Fatalf("%d writes: the output did not go through several buffers", w.writes)
	}
	if !bytes.Equal(w.out.Bytes(), data) {
		t.Fatalf("output differs (%d bytes, want %d)", w.out.Len(), len(data))
	}
	checkIndex(t, idx, comp, data)
}

type failingWriter struct {
	n, failAt int
	err       error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	if w.n == w.failAt {
		return 0, w.err
	}
	return len(p), nil
}

// A write error is returned whether it comes from a buffer written in the
// background or from the last one, written at the end.
func TestAsyncWriterReportsWriteErrors(t *testing.T) {
	_, comp := asyncInput(t)
	var count failingWriter
	if _, err := Decode(&count, bytes.NewReader(comp), int64(len(comp))); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, 2, count.n} {
		w := &failingWriter{failAt: at, err: errors.New("disk full")}
		_, err := Decode(w, bytes.NewReader(comp), int64(len(comp)))
		if !errors.Is(err, w.err) {
			t.Errorf("write %d of %d fails: Decode returned %v", at, count.n, err)
		}
	}
}

// syncDecode is decode without the asynchronous writer.
func syncDecode(w io.Writer, comp []byte) (*Index, error) {
	d := newDecoder(w, bufSize(int64(len(comp))))
	d.br.init(bytes.NewReader(comp), int64(len(comp)))
	if err := d.run(); err != nil {
		return nil, err
	}
	return &d.idx, nil
}

// Damaged and truncated large streams: the asynchronous writer gets the
// bytes a synchronous decoder writes, the same error, and on success the
// same index.
func TestAsyncWriterMatchesSynchronous(t *testing.T) {
	// Words drawn at random: Huffman-coded blocks throughout, where
	// damage shows (noise would make stored blocks, where it does not).
	rng := rand.New(rand.NewSource(5))
	words := make([]string, 2000)
	for i := range words {
		w := make([]byte, 2+rng.Intn(9))
		for j := range w {
			w[j] = byte('a' + rng.Intn(26))
		}
		words[i] = string(w) + " "
	}
	var text bytes.Buffer
	for text.Len() < 3*outBuf {
		text.WriteString(words[rng.Intn(len(words))])
	}
	comp := deflate(t, text.Bytes(), 1)
	fails := 0
	for trial := 0; trial < 12; trial++ {
		bad := bytes.Clone(comp)
		switch i := len(bad)/2 + rng.Intn(len(bad)/2-64); {
		case trial == 0:
		case trial%2 == 1:
			// Cut short: an error after several buffers were written.
			bad = bad[:i]
		default:
			// 64 random bytes: with complete codes this mostly decodes
			// (to other data), which both must agree on.
			rng.Read(bad[i : i+64])
		}
		var a, s bytes.Buffer
		aidx, aerr := Decode(&a, bytes.NewReader(bad), int64(len(bad)))
		sidx, serr := syncDecode(&s, bad)
		if fmt.Sprint(aerr) != fmt.Sprint(serr) {
			t.Fatalf("trial %d: asynchronous %v, synchronous %v", trial, aerr, serr)
		}
		if !bytes.Equal(a.Bytes(), s.Bytes()) {
			t.Fatalf("trial %d: %d bytes written asynchronously, %d synchronously, or they differ", trial, a.Len(), s.Len())
		}
		if serr == nil && !reflect.DeepEqual(aidx, sidx) {
			t.Fatalf("trial %d: indexes differ", trial)
		}
		if serr != nil {
			fails++
		}
	}
	if fails < 6 {
		t.Fatalf("only %d of 12 damaged streams failed, 6 were cut short", fails)
	}
}
