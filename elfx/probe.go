package elfx

import (
	"debug/elf"
	"fmt"
	"os"
)

// Probe is a file opened by a scanner that decides from its content what
// the file is: it is stat'ed, its first block has been read (an ELF parse
// reuses it), and it is then handed to ELF or Archive, or closed. One open, one fstat
// and one read per file that turns out not to be ELF; nothing repeated for
// one that is.
type Probe struct {
	Path string
	Info os.FileInfo
	// Head is the start of the file (up to 4 KiB, less for a shorter
	// file); valid until ELF or Close.
	Head []byte

	h  *handle
	br *blockReader
}

// OpenProbe opens path, which must be a regular file, and reads its head.
func OpenProbe(path string) (*Probe, error) {
	h, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	p := &Probe{Path: path, Info: st, h: h, br: newBlockReader(h, st.Size())}
	p.br.mu.Lock()
	blk, err := p.br.block(0)
	if err == nil {
		p.Head = blk.buf[:blk.n]
	}
	p.br.mu.Unlock()
	if err != nil {
		p.Close()
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return p, nil
}

// ReadAt reads the file through the block cache that holds Head.
func (p *Probe) ReadAt(b []byte, off int64) (int, error) {
	if p.h == nil {
		return 0, os.ErrClosed
	}
	return p.br.ReadAt(b, off)
}

// Kind classifies the file by its head.
func (p *Probe) Kind() FileKind { return kindOf(p.Head) }

// Type is the ELF file type recorded in the header (e_type), read from
// Head without parsing the file; ET_NONE when it is not ELF.
func (p *Probe) Type() elf.Type {
	h := p.Head
	if p.Kind() != KindELF || len(h) < 18 {
		return elf.ET_NONE
	}
	bo := byteOrder(elf.Data(h[elf.EI_DATA]))
	if bo == nil {
		return elf.ET_NONE
	}
	return elf.Type(bo.Uint16(h[16:]))
}

// ELF parses the file as ELF; the File takes over the descriptor (Close
// it), and the Probe is used up whether or not the parse succeeds.
func (p *Probe) ELF() (*File, error) {
	h, br, err := p.handOver()
	if err != nil {
		return nil, err
	}
	return openFile(h, br, p.Info, p.Path, defaultReads())
}

// handOver gives the descriptor and its block cache to the caller, and
// uses the Probe up.
func (p *Probe) handOver() (*handle, *blockReader, error) {
	if p.h == nil {
		return nil, nil, fmt.Errorf("%s: %w", p.Path, os.ErrClosed)
	}
	h, br := p.h, p.br
	p.h, p.br, p.Head = nil, nil, nil
	return h, br, nil
}

// ELFSegments is ELF for what the dynamic loader reads, as OpenSegments:
// the section header table is not read.
func (p *Probe) ELFSegments() (*File, error) {
	h, br, err := p.handOver()
	if err != nil {
		return nil, err
	}
	return openSegments(h, br, p.Info, p.Path, defaultReads())
}

// Archive parses the file as an ar archive (Kind says whether it is one);
// like ELF, the Archive takes over the descriptor and the Probe is used up.
func (p *Probe) Archive() (*Archive, error) {
	h, br, err := p.handOver()
	if err != nil {
		return nil, err
	}
	return openArchive(h, br, p.Info.Size(), p.Path, true)
}

// ArchiveMembers is Archive for a caller that reads the members and not
// the symbol index: the index is checked as Archive checks it (a damaged
// one is an error) but its names are not kept, and Symbols is nil.
// LLVM's libLLVMCodeGen.a has an index of 1 MB.
func (p *Probe) ArchiveMembers() (*Archive, error) {
	h, br, err := p.handOver()
	if err != nil {
		return nil, err
	}
	return openArchive(h, br, p.Info.Size(), p.Path, false)
}

// Close releases a Probe that was not handed to ELF or Archive.
func (p *Probe) Close() error {
	if p.h == nil {
		return nil
	}
	p.br.release()
	err := p.h.Close()
	p.h, p.br, p.Head = nil, nil, nil
	return err
}
