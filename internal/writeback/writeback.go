// Package writeback lets a large new file reach the disk while it is still
// being written: rocmdoctor fsyncs every file it replaces before renaming
// it into place, and an fsync that finds hundreds of megabytes still dirty
// waits for all of them at the end. Writers call Start for each stretch
// they have written (patchelf's copy of a large file: docs/performance.md
// has what it pays), and Free tells how much room a file system has left
// before a large write begins.
package writeback
