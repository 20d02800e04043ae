// Package zstd reads Zstandard streams (RFC 8878) with
// github.com/klauspost/compress/zstd, set up for untrusted input: one
// goroutine, windows up to zstd's own default limit (--memory=128MB), no
// dictionaries, and the decoder released once the stream ends or fails.
// It is what reads the payload of compressed clang offload bundles.
package zstd

import (
	"errors"
	"io"

	kzstd "github.com/klauspost/compress/zstd"
)

// MaxWindow is the largest window accepted (zstd's default decoder limit).
const MaxWindow = 1 << 27

// ErrDictionary reports a frame that needs a dictionary.
var ErrDictionary = errors.New("zstd: frame needs a dictionary")

// Reader decompresses a stream of zstd frames (skippable frames are
// passed over, content checksums verified).
type Reader struct {
	d   *kzstd.Decoder
	err error
}

// NewReader returns a Reader of the zstd stream r.
func NewReader(r io.Reader) *Reader {
	d, err := kzstd.NewReader(r, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxWindow(MaxWindow),
		kzstd.WithDecoderMaxMemory(2*MaxWindow), kzstd.WithDecoderLowmem(true))
	return &Reader{d: d, err: err}
}

// Read decompresses into p. At the end of the stream, or on its first
// error, the decoder is released.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.d.Read(p)
	if err != nil {
		if errors.Is(err, kzstd.ErrUnknownDictionary) {
			err = ErrDictionary
		}
		r.err = err
		r.d.Close()
	}
	return n, err
}

// Close releases the decoder of a stream not read to its end.
func (r *Reader) Close() {
	if r.err == nil {
		r.err = errors.New("zstd: reader closed")
		r.d.Close()
	}
}
