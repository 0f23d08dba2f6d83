package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
)

// record is one line of the -output file: what became of one request.
type record struct {
	// Job identifies the batch job: the same for every record of one output file, across resumed
	// runs. POST and PATCH requests carry the Idempotency-Key Job-ID.
	Job string `json:"job"`
	// Line is the input line (1-based), or the request's number without -input.
	Line int `json:"line"`
	// ID is the request's identity, which -resume matches (see item.id).
	ID     string `json:"id"`
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	// Status is the final response's status; 0 when there was none.
	Status int `json:"status,omitempty"`
	// Headers are the final response's headers (-output-headers).
	Headers http.Header `json:"headers,omitempty"`
	// BodyBytes and BodySHA256 describe the final response's body (-output-body digest, the
	// default): its length and the hex SHA-256 of it.
	BodyBytes  *int64 `json:"body_bytes,omitempty"`
	BodySHA256 string `json:"body_sha256,omitempty"`
	// Body is the body as text when it is valid UTF-8, BodyBase64 otherwise (-output-body full);
	// BodyTruncated says that only its first maxBodyRead bytes are there.
	Body          *string `json:"body,omitempty"`
	BodyBase64    string  `json:"body_base64,omitempty"`
	BodyTruncated bool    `json:"body_truncated,omitempty"`
	// Attempts is how many attempts were made (retries included).
	Attempts int `json:"attempts"`
	// ElapsedS is the request's time from its start to its end, waits and retries included.
	ElapsedS float64 `json:"elapsed_s"`
	// Error says why the request failed; "" when it succeeded.
	Error string `json:"error,omitempty"`
	// Done is true when the request succeeded (a 2xx final response): -resume never sends it
	// again. A failed request is recorded with Done false and sent again by -resume.
	Done bool `json:"done"`
}

// bodyMode is what a record keeps of a response body (-output-body).
type bodyMode string

const (
	bodyDigest bodyMode = "digest"
	bodyFull   bodyMode = "full"
	bodyNone   bodyMode = "none"
)

// bodyModes are the values -output-body accepts.
var bodyModes = []bodyMode{bodyDigest, bodyFull, bodyNone}

// errOutputExists is the error of an -output file that already holds records, without -resume.
var errOutputExists = errors.New("it already holds results: give -resume to continue that job, or another file")

// outputError is an -output file that cannot be used: it names the file and says why.
type outputError struct {
	path string
	err  error
}

func (e *outputError) Error() string { return fmt.Sprintf("-output %s: %v", e.path, e.err) }
func (e *outputError) Unwrap() error { return e.err }

// resultWriter appends records to the -output file, one JSON line each, written with one write
// each so that a process killed at any moment leaves at most its last line cut short (which the
// next -resume drops). It is safe for concurrent use.
type resultWriter struct {
	path string
	job  string

	mu      sync.Mutex
	f       *os.File
	written int
	err     error
}

// openOutput opens the -output file at path. Without resume, the file must be new or empty; with
// it, the records already there are read: the ids of those done are returned, the job id is kept,
// and a last line cut short by a killed run is dropped. A new job gets a random id.
func openOutput(path string, resume bool) (*resultWriter, map[string]bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, &outputError{path, err}
	}
	w := &resultWriter{path: path, f: f}
	done, job, end, open, err := readRecords(f)
	if err == nil && end > 0 && !resume {
		err = errOutputExists
	}
	if err == nil {
		err = f.Truncate(end) // drop a line cut short
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err == nil && open {
		_, err = f.Write([]byte("\n"))
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, &outputError{path, err}
	}
	if job == "" {
		job = newJobID()
	}
	w.job = job
	return w, done, nil
}

// newJobID returns 12 random hex digits: enough that two jobs never share an id (and so never
// share an Idempotency-Key), short enough to read.
func newJobID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// readRecords reads the records of an output file: the ids of the done ones, the job id, and the
// offset where the complete lines end. A last line without its newline that is not a whole record
// is a write cut short by a killed run: it is left out (end stops before it); one that is a whole
// record is kept, and open reports that it needs its newline. Any other line that is not a record
// of the same job is an error naming it.
func readRecords(r io.Reader) (done map[string]bool, job string, end int64, open bool, err error) {
	done = map[string]bool{}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, "", 0, false, rerr
		}
		if len(line) == 0 {
			return done, job, end, false, nil
		}
		complete := line[len(line)-1] == '\n'
		var rec record
		if text := bytes.TrimSpace(line); len(text) > 0 {
			if jerr := json.Unmarshal(text, &rec); jerr != nil || rec.Job == "" || rec.ID == "" {
				if !complete {
					return done, job, end, false, nil // cut short: dropped
				}
				return nil, "", 0, false, fmt.Errorf("line %d is not a batch result", n)
			}
			if job != "" && rec.Job != job {
				return nil, "", 0, false, fmt.Errorf("line %d is of job %s, the lines before of job %s: one file holds one job", n, rec.Job, job)
			}
			job = rec.Job
			if rec.Done {
				done[rec.ID] = true
			}
		}
		if !complete {
			// A whole record without its newline (or blanks): keep it, and end the line before
			// appending.
			return done, job, end + int64(len(line)), true, nil
		}
		end += int64(len(line))
	}
}

// write appends rec as one line. After the first failed write, every write fails with that error.
func (w *resultWriter) write(rec *record) error {
	rec.Job = w.job
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return &outputError{w.path, os.ErrClosed}
	}
	if _, err := w.f.Write(b); err != nil {
		w.err = &outputError{w.path, err}
		return w.err
	}
	w.written++
	return nil
}

// count is the number of records written.
func (w *resultWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// close flushes the file to disk and closes it; later calls do nothing.
func (w *resultWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	defer func() { w.f = nil }()
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &outputError{w.path, err}
	}
	return nil
}
