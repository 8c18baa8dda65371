package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// ReadBatches reads an NDJSON trace as ReadEach does, with the same checks
// and the same errors, but decodes its lines on several goroutines: one
// cuts the input into chunks of lines, workers decode the chunks, and the
// calling goroutine checks the events in order (seq, type, source) and
// hands them on. header is called with the header line, then each with
// the events in order, a chunk's worth at a time (the slice and its
// events are reused after each returns). An error either returns ends the
// read and is returned; ReadBatches returns only once its goroutines have
// stopped, so that the caller may read r again.
//
// workers is how many goroutines decode (0: GOMAXPROCS). Decoding is most
// of reading a trace; with it spread, a reader is bounded by what it does
// with the events.
func ReadBatches(r io.Reader, workers int, header func(Header) error, each func([]Event) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return readBatches(r, workers, 64<<10, header, each)
}

// A lineChunk is whole lines of a trace, trimmed, one after another in
// data, and what decoding them gave.
type lineChunk struct {
	data  []byte
	lines []lineRef
	// Set by the worker, then done is closed.
	events []Event
	bad    int   // index in lines of the line that ends the chunk with err; len(lines) when none
	err    error // why that line is not an event
	done   chan struct{}
}

// lineRef is where one line is in its chunk's data, and its number.
type lineRef struct {
	line       int
	start, end int
}

// readEnd is how the cutting ended: after the last chunk, the scanner's
// error, the lines it counted, and the header line if it found one.
type readEnd struct {
	err    error
	lines  int
	header []byte
	hline  int
}

func readBatches(r io.Reader, workers, chunkSize int, header func(Header) error, each func([]Event) error) error {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	ordered := make(chan *lineChunk, 2*workers+2) // bounds what is in flight
	work := make(chan *lineChunk, 2*workers+2)
	headerLine := make(chan readEnd, 1) // the header, or the end when there is none
	end := make(chan readEnd, 1)
	free := make(chan *lineChunk, cap(ordered)+workers+1) // chunks handed back for reuse

	// The cutter: it reads blocks of about chunkSize bytes straight into a
	// chunk's data and marks the lines where they lie (a line a block ends
	// inside begins the next block), splitting, counting and limiting them
	// as ReadEach's bufio.Scanner does (ScanLines, maxLine, its read
	// errors). Through a Scanner, each line was copied twice more.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ordered)
		defer close(work)
		line := 0
		sawHeader := false
		var c *lineChunk
		var carry []byte // a copy of the line the last block ended inside
		var readErr, endErr error
		send := func() bool {
			if c == nil || len(c.lines) == 0 {
				return true
			}
			select {
			case <-stop: // checked first: a select takes any ready case
				return false
			default:
			}
			select {
			case ordered <- c:
			case <-stop:
				return false
			}
			work <- c // never blocks longer than ordered did: workers drain it
			c = nil
			return true
		}
		for readErr == nil && endErr == nil {
			if c == nil {
				select {
				case c = <-free:
					c.lines, c.done = c.lines[:0], make(chan struct{})
				default:
					c = &lineChunk{data: make([]byte, 0, chunkSize+1024), done: make(chan struct{})}
				}
			}
			data := append(c.data[:0], carry...)
			// Read chunkSize bytes, and on until a line ends in them, the
			// input ends, or the line is too long.
			for want, looked := chunkSize, len(carry); ; {
				data, readErr = readTo(r, data, want)
				if readErr != nil || bytes.IndexByte(data[looked:], '\n') >= 0 || len(data) >= maxLine {
					break
				}
				want, looked = len(data)+chunkSize, len(data)
			}
			c.data = data
			// The lines whole: up to the last newline; at the end of the
			// input, or at a read error, the rest too.
			whole := bytes.LastIndexByte(data, '\n') + 1
			if readErr != nil {
				whole = len(data)
			}
			for at := 0; at < whole; {
				n := bytes.IndexByte(data[at:whole], '\n')
				next := at + n + 1
				if n < 0 {
					n, next = whole-at, whole
				}
				if n >= maxLine { // the scanner's buffer is full before the line ends
					endErr = bufio.ErrTooLong
					break
				}
				b := bytes.TrimSpace(data[at : at+n])
				at = next
				line++
				if len(b) == 0 {
					continue
				}
				if !sawHeader {
					sawHeader = true
					headerLine <- readEnd{header: bytes.Clone(b), hline: line}
					continue
				}
				off := cap(data) - cap(b) // b lies in data: its start is where its room begins
				c.lines = append(c.lines, lineRef{line, off, off + len(b)})
			}
			if endErr == nil && readErr == nil && len(data)-whole >= maxLine {
				endErr = bufio.ErrTooLong
			}
			carry = append(carry[:0], data[whole:]...)
			if !send() {
				return
			}
		}
		err := endErr
		if err == nil && readErr != io.EOF {
			err = readErr
		}
		if !sawHeader {
			headerLine <- readEnd{err: err, lines: line}
		}
		end <- readEnd{err: err, lines: line}
	}()

	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec eventDecoder
			for c := range work {
				decodeChunk(&dec, c)
				close(c.done)
			}
		}()
	}

	err := judgeBatches(headerLine, ordered, end, free, header, each)
	close(stop)
	for c := range ordered { // let the cutter and the workers finish what they hold
		<-c.done
	}
	wg.Wait()
	return err
}

// decodeChunk decodes c's lines into c.events up to the first line that is
// not an event as ReadEach sees it (a decoding error, the driver's end
// line, no type), leaving the checks that need the lines before (seq) or
// the header (source) to judgeBatches.
func decodeChunk(dec *eventDecoder, c *lineChunk) {
	if cap(c.events) < len(c.lines) {
		c.events = make([]Event, len(c.lines))
	}
	c.events = c.events[:len(c.lines)]
	c.bad, c.err = len(c.lines), nil
	for i, ref := range c.lines {
		b := c.data[ref.start:ref.end]
		e := &c.events[i]
		err := dec.decode(b, e)
		switch {
		case err != nil:
		case e.Type == "" && isEndLine(b):
			err = endLineError(b)
		case e.Type == "":
			err = errNoType
		}
		if err != nil {
			c.bad, c.err = i, explainValue(b, err)
			c.events = c.events[:i]
			return
		}
	}
}

// readTo reads from r into data, after what it holds, until it holds n
// bytes or more, or r ends (io.EOF) or fails; as bufio.Scanner does, it
// gives up on a reader that gives nothing a hundred times over, and on one
// that says it gave more than it had room for.
func readTo(r io.Reader, data []byte, n int) ([]byte, error) {
	if cap(data) < n {
		data = append(make([]byte, 0, n+1024), data...)
	}
	for empty := 0; len(data) < n; {
		k, err := r.Read(data[len(data):cap(data)])
		if k < 0 || k > cap(data)-len(data) {
			return data, bufio.ErrBadReadCount
		}
		data = data[:len(data)+k]
		if err != nil {
			return data, err
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty > 100 {
			return data, io.ErrNoProgress
		}
	}
	return data, nil
}

// judgeBatches is ReadBatches' calling goroutine: the header, then the
// chunks in order, each event checked as ReadEach checks it.
func judgeBatches(headerLine <-chan readEnd, ordered <-chan *lineChunk, end <-chan readEnd, free chan<- *lineChunk, header func(Header) error, each func([]Event) error) error {
	var h Header
	hl := <-headerLine
	if hl.header == nil {
		if hl.err != nil {
			return scanError(hl.err, hl.lines)
		}
		return emptyTrace()
	}
	b := bytes.TrimPrefix(hl.header, utf8BOM) // an editor's mark, not content
	if err := readHeader(b, &h); err != nil {
		return &ParseError{hl.hline, err}
	}
	if err := header(h); err != nil {
		return err
	}
	var last uint64
	for c := range ordered {
		<-c.done
		for i := range c.events {
			e := &c.events[i]
			var err error
			switch {
			case e.Seq <= last:
				err = seqError(e.Seq, last)
			default:
				err = typeError(e, &h)
			}
			if err != nil {
				if err := sendEvents(c.events[:i], each); err != nil {
					return err
				}
				ref := c.lines[i]
				return &ParseError{ref.line, explainValue(c.data[ref.start:ref.end], err)}
			}
			last = e.Seq
		}
		if err := sendEvents(c.events, each); err != nil {
			return err
		}
		if c.bad < len(c.lines) {
			return &ParseError{c.lines[c.bad].line, c.err}
		}
		select {
		case free <- c:
		default:
		}
	}
	e := <-end
	if e.err != nil {
		return scanError(e.err, e.lines)
	}
	return nil
}

func sendEvents(events []Event, each func([]Event) error) error {
	if len(events) == 0 {
		return nil
	}
	return each(events)
}

// The errors ReadEach and ReadBatches share.

var errNoType = fmt.Errorf("event has no \"type\"")

func emptyTrace() error {
	return &ParseError{1, fmt.Errorf("empty trace: expected a header line {\"trace\":%q}", Version)}
}

func endLineError(b []byte) error {
	return fmt.Errorf("%s is the driver protocol's end line, not an event: a trace ends with its last event. Delete this line (a driver's stdout without its first line, the handshake, and its last, the end line, is its trace; docs/driver-protocol.md)", b)
}

func seqError(seq, last uint64) error {
	return fmt.Errorf("seq %d after seq %d: seq numbers the events in the order of their lines, from 1, each above the one before (docs/trace.md); a duplicate or a line out of order means the trace was edited or spliced. Record it again, or put its lines back in seq order", seq, last)
}

// typeError says why e's type cannot be in a trace with header h, or nil.
func typeError(e *Event, h *Header) error {
	if src, known := e.Type.Source(); !known {
		return fmt.Errorf("unknown event type %q (docs/trace.md lists the types of %s)", e.Type, Version)
	} else if !h.Reports(src) {
		return fmt.Errorf("event seq %d is a %s event, of source %q, which the trace header does not report (sources %v): the header lists every source whose events the trace holds (docs/trace.md, Sources). Add %q to its sources, or drop these events", e.Seq, e.Type, src, h.Sources, src)
	}
	return nil
}

// scanError is the error of a bufio.Scanner that had read lines lines.
func scanError(err error, lines int) error {
	if err == bufio.ErrTooLong {
		return &ParseError{lines + 1, fmt.Errorf("line longer than %d bytes", maxLine)}
	}
	return err
}
