package zipx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Raw zip records, for writing a zip whose unchanged entries are the
// input's bytes: local header, extra fields, data and data descriptor as
// they were. archive/zip's Writer makes every local header anew (its own
// version fields and extra data), so a relinked wheel differed in every
// entry. Only the central directory, where the entries' offsets are, and
// the entries that change are written here.

var le = binary.LittleEndian

const (
	centralSig    = 0x02014b50
	localSig      = 0x04034b50
	descriptorSig = 0x08074b50
	zip64ID       = 0x0001
	centralLen    = 46
	localLen      = 30
	flagDataDesc  = 0x8
	max32         = math.MaxUint32
)

// Record is one central directory record, as stored.
type Record []byte

func (r Record) nameLen() int    { return int(le.Uint16(r[28:])) }
func (r Record) extraLen() int   { return int(le.Uint16(r[30:])) }
func (r Record) commentLen() int { return int(le.Uint16(r[32:])) }

// Name is the entry's name.
func (r Record) Name() string { return string(r[centralLen : centralLen+r.nameLen()]) }

// Flags is the general purpose bit flag.
func (r Record) Flags() uint16 { return le.Uint16(r[8:]) }

func (r Record) extra() []byte {
	at := centralLen + r.nameLen()
	return r[at : at+r.extraLen()]
}

// values returns the sizes and the local header offset, taking the 64-bit
// values from the zip64 extra field for each 32-bit field that says so.
func (r Record) values() (crc uint32, csize, usize uint64, off int64, err error) {
	crc = le.Uint32(r[16:])
	csize, usize, off64 := uint64(le.Uint32(r[20:])), uint64(le.Uint32(r[24:])), uint64(le.Uint32(r[42:]))
	if csize == max32 || usize == max32 || off64 == max32 {
		f := field(r.extra(), zip64ID)
		take := func(v *uint64) {
			if *v != max32 {
				return
			}
			if len(f) < 8 {
				err = errors.New("zip64 extra field too short")
				return
			}
			*v, f = le.Uint64(f), f[8:]
		}
		// The order APPNOTE gives: sizes, then the offset.
		take(&usize)
		take(&csize)
		take(&off64)
	}
	if off64 > math.MaxInt64 {
		err = errors.New("local header offset out of range")
	}
	return crc, csize, usize, int64(off64), err
}

// field returns the data of the first extra field with id, nil if none.
func field(extra []byte, id uint16) []byte {
	for len(extra) >= 4 {
		n := 4 + int(le.Uint16(extra[2:]))
		if n > len(extra) {
			return nil
		}
		if le.Uint16(extra) == id {
			return extra[4:n]
		}
		extra = extra[n:]
	}
	return nil
}

// without returns extra without its fields whose ID is in ids; a field
// that runs past the end ends the data.
func without(extra []byte, ids ...uint16) []byte {
	var out []byte
	for len(extra) >= 4 {
		n := 4 + int(le.Uint16(extra[2:]))
		if n > len(extra) {
			break
		}
		if !slices.Contains(ids, le.Uint16(extra)) {
			out = append(out, extra[:n]...)
		}
		extra = extra[n:]
	}
	return out
}

// CentralRecords reads the central directory of the zip file raw of size
// bytes: its records in directory order (archive/zip's Reader.File order).
func CentralRecords(raw io.ReaderAt, size int64) ([]Record, error) {
	at := centralDirOffset(raw, size)
	n, err := centralDirSize(raw, size)
	if err != nil {
		return nil, err
	}
	if at < 0 || n < 0 || at > size || n > size-at {
		return nil, errors.New("central directory outside the file")
	}
	cd := make([]byte, n)
	if _, err := raw.ReadAt(cd, at); err != nil {
		return nil, err
	}
	var recs []Record
	for b := cd; len(b) > 0; {
		if len(b) < centralLen || le.Uint32(b) != centralSig {
			break // the zip64 end records follow the directory
		}
		r := Record(b[:centralLen])
		l := centralLen + r.nameLen() + r.extraLen() + r.commentLen()
		if l > len(b) {
			return nil, errors.New("malformed central directory record")
		}
		recs = append(recs, Record(b[:l:l]))
		b = b[l:]
	}
	return recs, nil
}

// centralDirSize reads the size of the central directory from the end
// records (zip64 when the 32-bit field says so); it counts to the end
// record when that is all there is.
func centralDirSize(raw io.ReaderAt, size int64) (int64, error) {
	n := min(size, 22+65535)
	b := make([]byte, n)
	if _, err := raw.ReadAt(b, size-n); err != nil && err != io.EOF {
		return 0, err
	}
	i := bytes.LastIndex(b, []byte("PK\x05\x06"))
	if i < 0 || len(b)-i < 22 {
		return 0, errors.New("no end of central directory record")
	}
	sz := int64(le.Uint32(b[i+12:]))
	if sz == max32 && i >= 20 && string(b[i-20:i-16]) == "PK\x06\x07" {
		var z [56]byte
		at := int64(le.Uint64(b[i-12:]))
		if at < 0 || at > size-56 {
			return 0, errors.New("bad zip64 end record locator")
		}
		if _, err := raw.ReadAt(z[:], at); err != nil || string(z[:4]) != "PK\x06\x06" {
			return 0, errors.New("no zip64 end record where its locator says")
		}
		sz = int64(le.Uint64(z[40:]))
	}
	return sz, nil
}

// Local is an entry's local record in the input: where its header
// begins, where its data begins and where the record ends (past the data
// descriptor, when it has one).
type Local struct {
	Header, Data, End int64
	// Descriptor is the length of the data descriptor after the data.
	Descriptor int64
}

// LocalOf finds the local record of the entry rec describes in raw.
func LocalOf(raw io.ReaderAt, rec Record) (Local, error) {
	crc, csize, usize, off, err := rec.values()
	if err != nil {
		return Local{}, err
	}
	var h [localLen]byte
	if _, err := raw.ReadAt(h[:], off); err != nil || le.Uint32(h[:]) != localSig {
		return Local{}, fmt.Errorf("%w: no local header where the central directory puts it", errFormat)
	}
	data := off + localLen + int64(le.Uint16(h[26:])) + int64(le.Uint16(h[28:]))
	if csize > math.MaxInt64-uint64(data) {
		return Local{}, fmt.Errorf("%w: entry size out of range", errFormat)
	}
	l := Local{Header: off, Data: data, End: data + int64(csize)}
	if le.Uint16(h[6:])&flagDataDesc == 0 {
		return l, nil
	}
	// The descriptor: an optional signature, the CRC-32, then both sizes
	// in 4 or 8 bytes each; the form whose values are the directory's.
	var d [28]byte
	k, _ := raw.ReadAt(d[:], l.End)
	for _, sig := range []int{4, 0} {
		for _, w := range []int{4, 8} {
			n := sig + 4 + 2*w
			if k < n || sig == 4 && le.Uint32(d[:]) != descriptorSig || le.Uint32(d[sig:]) != crc {
				continue
			}
			get := func(b []byte) uint64 {
				if w == 4 {
					return uint64(le.Uint32(b))
				}
				return le.Uint64(b)
			}
			if get(d[sig+4:]) == csize && get(d[sig+4+w:]) == usize {
				l.Descriptor = int64(n)
				l.End += int64(n)
				return l, nil
			}
		}
	}
	return Local{}, fmt.Errorf("%w: the data descriptor does not repeat the directory's CRC-32 and sizes", errFormat)
}

var errFormat = errors.New("zip: not a valid zip file")

// WithValues returns a copy of rec for an entry whose CRC-32, sizes, flags
// and local header offset are those given: the 32-bit fields, and a zip64
// extra field (first in the extra data, replacing the old one) for the
// values that do not fit. Name, times, attributes, comment and the other
// extra fields stay.
func (r Record) WithValues(crc uint32, csize, usize uint64, flags uint16, off int64) Record {
	var z []byte
	put := func(v uint64) uint32 {
		if v < max32 {
			return uint32(v)
		}
		z = le.AppendUint64(z, v)
		return max32
	}
	u32, c32 := put(usize), put(csize)
	o32 := put(uint64(off))
	extra := without(r.extra(), zip64ID)
	if len(z) > 0 {
		extra = append(append(le.AppendUint16(le.AppendUint16(nil, zip64ID), uint16(len(z))), z...), extra...)
	}
	name := r[centralLen : centralLen+r.nameLen()]
	comment := r[centralLen+r.nameLen()+r.extraLen():]
	out := make(Record, 0, centralLen+len(name)+len(extra)+len(comment))
	out = append(out, r[:centralLen]...)
	le.PutUint16(out[8:], flags)
	le.PutUint32(out[16:], crc)
	le.PutUint32(out[20:], c32)
	le.PutUint32(out[24:], u32)
	le.PutUint16(out[30:], uint16(len(extra)))
	le.PutUint32(out[42:], o32)
	if len(z) > 0 && le.Uint16(out[6:]) < 45 {
		le.PutUint16(out[6:], 45) // version needed to extract: zip64
	}
	out = append(append(append(out, name...), extra...), comment...)
	return out
}

// NewLocal makes the local header of a changed entry from its old one
// (version, times, name and extra fields kept): CRC-32, sizes and flags
// as given, with a zip64 extra field when a size does not fit. With the
// data descriptor flag, CRC-32 and sizes are zero, as they follow the
// data.
func NewLocal(old []byte, crc uint32, csize, usize uint64, flags uint16) []byte {
	nl, el := int(le.Uint16(old[26:])), int(le.Uint16(old[28:]))
	name, extra := old[localLen:localLen+nl], without(old[localLen+nl:localLen+nl+el], zip64ID, alignID)
	h := make([]byte, localLen, localLen+nl+el+20)
	copy(h, old[:localLen])
	le.PutUint16(h[6:], flags)
	if flags&flagDataDesc != 0 {
		crc, csize, usize = 0, 0, 0
	}
	le.PutUint32(h[14:], crc)
	if csize >= max32 || usize >= max32 {
		f := le.AppendUint64(le.AppendUint64(le.AppendUint16(le.AppendUint16(nil, zip64ID), 16), usize), csize)
		extra = append(f, extra...)
		csize, usize = max32, max32
		if le.Uint16(h[4:]) < 45 {
			le.PutUint16(h[4:], 45)
		}
	}
	le.PutUint32(h[18:], uint32(csize))
	le.PutUint32(h[22:], uint32(usize))
	le.PutUint16(h[28:], uint16(len(extra)))
	return append(append(h, name...), extra...)
}

// alignID is Android zipalign's padding field, which earlier relinks
// added to local headers.
const alignID = 0xd935

// Descriptor is the data descriptor after a changed entry's data, with
// 8-byte sizes when either does not fit in 4.
func Descriptor(crc uint32, csize, usize uint64) []byte {
	d := le.AppendUint32(le.AppendUint32(nil, descriptorSig), crc)
	if csize >= max32 || usize >= max32 {
		return le.AppendUint64(le.AppendUint64(d, csize), usize)
	}
	return le.AppendUint32(le.AppendUint32(d, uint32(csize)), uint32(usize))
}

// Writer writes a zip file from raw records: each entry's bytes are
// written (or copied by someone else, then counted with Skip), its
// central record added with Central, and Close writes the central
// directory in key order and the end records.
type Writer struct {
	w   io.Writer
	off int64
	cd  []keyed
}

type keyed struct {
	key int
	rec Record
}

// NewWriter writes to w, whose next byte is at offset base of the file.
func NewWriter(w io.Writer, base int64) *Writer { return &Writer{w: w, off: base} }

// Offset is where the next byte goes.
func (w *Writer) Offset() int64 { return w.off }

func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.off += int64(n)
	return n, err
}

// Skip counts n bytes written to the file past the writer.
func (w *Writer) Skip(n int64) { w.off += n }

// Central adds an entry's central record; key orders the directory.
func (w *Writer) Central(key int, rec Record) { w.cd = append(w.cd, keyed{key, rec}) }

// Close writes the central directory, sorted by key, and the end records:
// zip64 ones when there are 65535 entries or more, or an offset or size
// that does not fit in 32 bits.
func (w *Writer) Close() error {
	slices.SortStableFunc(w.cd, func(a, b keyed) int { return a.key - b.key })
	start := w.off
	for _, k := range w.cd {
		if _, err := w.Write(k.rec); err != nil {
			return err
		}
	}
	size, count := w.off-start, uint64(len(w.cd))
	var end []byte
	if count >= 0xffff || size >= max32 || start >= max32 {
		at := w.off
		z := le.AppendUint32(nil, 0x06064b50)
		z = le.AppendUint64(z, 44)
		z = le.AppendUint16(le.AppendUint16(z, 45), 45)
		z = le.AppendUint32(le.AppendUint32(z, 0), 0)
		z = le.AppendUint64(le.AppendUint64(z, count), count)
		z = le.AppendUint64(le.AppendUint64(z, uint64(size)), uint64(start))
		z = le.AppendUint32(z, 0x07064b50)
		z = le.AppendUint32(z, 0)
		z = le.AppendUint64(z, uint64(at))
		z = le.AppendUint32(z, 1)
		end = z
	}
	clamp := func(v, m uint64) uint64 { return min(v, m) }
	e := le.AppendUint32(nil, 0x06054b50)
	e = le.AppendUint32(e, 0)
	e = le.AppendUint16(le.AppendUint16(e, uint16(clamp(count, 0xffff))), uint16(clamp(count, 0xffff)))
	e = le.AppendUint32(le.AppendUint32(e, uint32(clamp(uint64(size), max32))), uint32(clamp(uint64(start), max32)))
	e = le.AppendUint16(e, 0)
	_, err := w.Write(append(end, e...))
	return err
}

// WithOffset returns a copy of rec for the same entry with its local
// header at off.
func (r Record) WithOffset(off int64) Record {
	crc, csize, usize, _, _ := r.values()
	return r.WithValues(crc, csize, usize, r.Flags(), off)
}
