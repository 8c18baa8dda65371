package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Every file a command writes goes through this file, and only this file
// opens files for writing (TestOneOutputGuard keeps it so):
//
//   - the outputs are declared before anything runs, and guardOutputs
//     refuses one that is an input or another output (checkPaths); writing
//     a path that was not declared is a bug (a panic, exit 3);
//   - a whole file (a trace, the matrix, a golden, --json) is written to a
//     temporary file beside it and renamed into place when complete, so
//     that a failed or interrupted write leaves either the whole file or
//     none (never a 0-byte or half-written one);
//   - a file written as the run goes (the results CSV, a spec's partial
//     trace, the timeline) holds whole lines (or, the timeline, a whole
//     JSON document) after every write, and is removed when a write fails;
//   - a failure is an *outputError that says which option, which file,
//     what happened and what to do; the command exits exitIO.

// outputSet is the files a command may write, checked against its inputs.
type outputSet struct {
	declared map[string]string // absolute path -> the option that names it
}

// guardOutputs declares a command's outputs: none may be an input or
// another output.
func guardOutputs(inputs, outputs []namedPath) (*outputSet, error) {
	if err := checkPaths(inputs, outputs); err != nil {
		return nil, err
	}
	o := &outputSet{declared: map[string]string{}}
	for _, p := range outputs {
		o.declared[absPath(p.path)] = p.flag
	}
	return o, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// flag is the option that declared path; an undeclared path is a bug.
func (o *outputSet) flag(path string) string {
	if o != nil {
		if f, ok := o.declared[absPath(path)]; ok {
			return f
		}
	}
	panic(fmt.Sprintf("replayspec writes %s, which no option declared: every output must pass guardOutputs", path))
}

// outputError is an output that could not be written.
type outputError struct {
	Flag, Path string
	Err        error
	Left       string // what is left of the file: "nothing was written", ...
}

func (e *outputError) Error() string {
	left := e.Left
	if left == "" {
		left = "nothing was written"
	}
	return fmt.Sprintf("%s %s: %v: %s; %s", e.Flag, e.Path, cause(e.Err), left, ioHint(e.Err))
}

func (e *outputError) Unwrap() error { return e.Err }

// cause is an I/O error without the path that our message already names.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// ioHint says what to do about an I/O error.
func ioHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "free some space (or write it elsewhere) and run again"
	case errors.Is(err, syscall.EFBIG):
		return "the file size limit is reached (ulimit -f): raise it, or write less (select fewer specs)"
	case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.EROFS):
		return "write it to a directory you may write to"
	case errors.Is(err, syscall.ENAMETOOLONG):
		return "give a shorter path"
	case errors.Is(err, syscall.ENOTDIR):
		return "a part of the path is a file, not a directory: give another path"
	case errors.Is(err, syscall.EPIPE):
		return "the reader of the output went away"
	}
	return "check the path and the disk, and run again"
}

// isIOError tells an output's failure from other errors.
func isIOError(err error) bool {
	var oe *outputError
	return errors.As(err, &oe)
}

// temps are the temporary files being written now, removed by a second
// interrupt that exits at once.
var temps = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func removeTemps() {
	temps.Lock()
	defer temps.Unlock()
	for p := range temps.m {
		_ = os.Remove(p)
	}
}

// special reports whether path is an existing file that is not a regular
// one (/dev/stdout, /dev/null, a FIFO): it is written in place, since
// renaming over it would replace the device.
func special(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// write writes a whole file through fn: complete, or not at all.
func (o *outputSet) write(path string, fn func(io.Writer) error) error {
	flag := o.flag(path)
	if err := writeWhole(path, fn); err != nil {
		return &outputError{Flag: flag, Path: path, Err: err}
	}
	return nil
}

// writeWhole writes path through a temporary file renamed into place.
func writeWhole(path string, fn func(io.Writer) error) error {
	if special(path) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 64<<10)
		err = fn(bw)
		if err == nil {
			err = bw.Flush()
		}
		return errors.Join(err, f.Close())
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a link names where to write, as os.Create would follow it
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".replayspec-*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	temps.Lock()
	temps.m[name] = true
	temps.Unlock()
	defer func() {
		temps.Lock()
		delete(temps.m, name)
		temps.Unlock()
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		_ = os.Remove(name)
		return err
	}
	return nil
}

// streamOut is a file written as the run goes. After a failed write it is
// removed and takes no more; Err says why.
type streamOut struct {
	mu         sync.Mutex
	flag, path string
	f          *os.File
	off        int64
	err        *outputError
}

// stream creates a file written as the run goes, with its directory.
func (o *outputSet) stream(path string) (*streamOut, error) {
	flag := o.flag(path)
	s := &streamOut{flag: flag, path: path}
	f, err := openStream(path)
	if err != nil {
		return nil, &outputError{Flag: flag, Path: path, Err: err}
	}
	s.f = f
	return s, nil
}

func openStream(path string) (*os.File, error) {
	if special(path) {
		return os.OpenFile(path, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// Write appends p in one write; a failure removes the file.
func (s *streamOut) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.f.Write(p)
	s.off += int64(n)
	if err != nil {
		s.failLocked(err)
		return n, s.err
	}
	return n, nil
}

// WriteAt writes p at off in one write (a timeline keeping its end in
// place); a failure removes the file.
func (s *streamOut) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.f.WriteAt(p, off)
	if err != nil {
		s.failLocked(err)
		return n, s.err
	}
	return n, nil
}

func (s *streamOut) failLocked(err error) {
	left := "it is removed"
	if special(s.path) {
		left = "what was written is cut short"
	} else {
		_ = os.Remove(s.path)
	}
	_ = s.f.Close()
	s.f = nil
	s.err = &outputError{Flag: s.flag, Path: s.path, Err: err, Left: left}
}

// fail ends the file with err, as a failed write does (it is removed).
func (s *streamOut) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.f != nil {
		s.failLocked(err)
	}
}

// Err is the first failure, or nil.
func (s *streamOut) Err() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return nil
	}
	return s.err
}

// Close closes the file; a failure removes it.
func (s *streamOut) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		left := "it is removed"
		_ = os.Remove(s.path)
		s.err = &outputError{Flag: s.flag, Path: s.path, Err: err, Left: left}
		return s.err
	}
	return nil
}

// Remove closes and removes the file (a partial trace whose spec is done).
func (s *streamOut) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		_ = s.f.Close()
		s.f = nil
	}
	if !special(s.path) {
		_ = os.Remove(s.path)
	}
}

// adopt makes the stream file from (closed) the output to: a partial
// trace that becomes the trace.
func (o *outputSet) adopt(from, to string) error {
	o.flag(from)
	flag := o.flag(to)
	if err := os.Rename(from, to); err != nil {
		return &outputError{Flag: flag, Path: to, Err: err}
	}
	return nil
}

// writeCache writes a file of replayspec's own (the --last-failed record),
// whole or not at all; it is not an output of the command.
func writeCache(path string, data []byte) error {
	return writeWhole(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// outputErrors keeps the first failure of each output, so that a disk that
// is full is told once per file, not once per spec.
type outputErrors struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
	io   bool // an output could not be written (exitIO)
}

// add records err under key (an output's option and path); a second error
// of the same output is dropped.
func (e *outputErrors) add(key string, err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var oe *outputError
	if errors.As(err, &oe) {
		key = oe.Flag + " " + oe.Path
		e.io = true
	}
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	if e.seen[key] {
		return
	}
	e.seen[key] = true
	e.list = append(e.list, err.Error())
}

func (e *outputErrors) any() bool { return len(e.list) > 0 }

// scratchFile is an unlinked temporary file: scratch space a command reads
// back itself (check spools a pipe's trace to it), never an output. It is
// here so that outputs.go stays the one place that makes files; being
// unlinked at once, nothing of it is left behind whatever happens.
func scratchFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // the open file lives on until it is closed
	return f, nil
}
