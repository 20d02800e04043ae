// Package elfx reads what ROCm packagers ask about ELF files: header facts
// (including AMDGPU processors and code-object versions), the dynamic section,
// dynamic and static symbols with their GNU symbol versions, version
// definitions and requirements, static archives (GNU, BSD and thin), and the
// AMDGPU code objects that host libraries carry in clang offload bundles or as
// raw embedded images.
//
// It is built on Go's debug/elf for section and symbol tables and adds the
// parts debug/elf lacks: e_flags, a loader-view dynamic section (PT_DYNAMIC
// and DT_STRTAB mapped through PT_LOAD, so files without section headers
// still answer), program-header facts (interpreter, GNU_STACK), archives and
// offload bundles.
//
// File and Archive are constructed from an io.ReaderAt; Open and OpenArchive
// are wrappers that own the underlying *os.File. Nothing reads a whole file:
// headers are read eagerly, tables lazily and only when asked for, and device
// code is located by reading bundle headers and code-object ELF headers only.
//
// # Security
//
// Every offset, size, count and index taken from the input is checked
// against the size of the input (and, for tables that are materialised in
// memory, against a fixed cap) before it is used to allocate or read.
// Malformed input yields a *FormatError naming the file, the structure and
// the offset; it never panics. As a last line of defence, calls into
// debug/elf are guarded so that a panic inside the standard library is
// reported as a *FormatError too. The package never executes or relocates
// the file it reads; it maps a file read-only only to view its dynamic
// symbol tables (DynamicSymbolTable, where the mapping is checked against
// the file's size and a file truncated meanwhile is an error, not a
// fault; 32-bit builds read instead), and it does not follow paths found inside a
// file except the member paths of a thin archive, which are resolved relative
// to the archive's own directory. It does not defend against inputs that are
// modified while being read, and it does not bound the total time spent on a
// pathological but well-formed file (for example an archive with millions of
// members); callers that process untrusted input at scale should apply their
// own limits.
package elfx
