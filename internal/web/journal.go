package web

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Journal is an append-only file of the intake's requests that arrived
// while the database was being migrated: each is on disk (fsynced) before
// it is answered, and is replayed through the same handlers once the
// database is ready. A crash during the migration leaves the file, and the
// next start replays it.
//
// A record is framed as its length and CRC-32 (4 bytes each, big-endian)
// and its JSON: a record cut off by a crash while it was written (never
// answered) fails its check, ends the read, and is cut from the file when
// it is opened again.
type Journal struct {
	path string

	mu     sync.Mutex
	f      *os.File
	size   int64 // bytes of whole records
	closed bool  // the journal was replayed and removed: serve live

	// syncMu lets one appender fsync every record written before it, so
	// concurrent requests share an fsync (group commit).
	syncMu sync.Mutex
	synced int64
}

// journalRecord is one request as the server received it: enough to run it
// through the same handler later as if it arrived then.
type journalRecord struct {
	At     time.Time   `json:"at"`
	IP     string      `json:"ip"` // the client's address as the server reads it (trusted proxies)
	HTTPS  bool        `json:"https"`
	Method string      `json:"method"`
	Target string      `json:"target"` // the request URI: path and query
	Host   string      `json:"host"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// maxJournal is the largest the journal grows: past it the intake is
// refused (503) rather than fill the disk during a long migration.
const maxJournal = 1 << 30

// errJournalClosed says the journal was replayed: the request is served
// live.
var errJournalClosed = errors.New("web: the upgrade journal is replayed")

// errJournalFull says the journal reached maxJournal.
var errJournalFull = errors.New("web: the upgrade journal is full")

// OpenJournal opens the journal at path, creating it (and syncing its
// folder, so the file itself survives a crash), and cuts a record that a
// crash left half-written.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("web: upgrade journal: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	j := &Journal{path: path, f: f}
	end, err := j.scan(0, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(end); err != nil {
		f.Close()
		return nil, fmt.Errorf("web: upgrade journal: %w", err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("web: upgrade journal: %w", err)
	}
	j.size, j.synced = end, end
	return j, nil
}

// JournalExists tells whether a journal is at path: requests of an upgrade
// that did not finish, to replay before anything else.
func JournalExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// append writes rec and returns once it is on disk.
func (j *Journal) append(rec *journalRecord) error {
	payload, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	frame := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint32(frame, uint32(len(payload)))
	binary.BigEndian.PutUint32(frame[4:], crc32.ChecksumIEEE(payload))
	copy(frame[8:], payload)
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return errJournalClosed
	}
	if j.size+int64(len(frame)) > maxJournal {
		j.mu.Unlock()
		return errJournalFull
	}
	if _, err := j.f.Write(frame); err != nil {
		// A part written is cut again at the next open; later frames
		// would follow garbage, so the journal takes no more.
		j.mu.Unlock()
		return fmt.Errorf("web: upgrade journal: %w", err)
	}
	j.size += int64(len(frame))
	mine := j.size
	j.mu.Unlock()

	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.synced >= mine {
		return nil // another appender's fsync covered this record
	}
	j.mu.Lock()
	upto := j.size
	j.mu.Unlock()
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("web: upgrade journal: %w", err)
	}
	j.synced = upto
	return nil
}

// scan reads whole records from offset from, handing each to fn (when not
// nil) with the offset after it, and returns the offset after the last
// whole record.
func (j *Journal) scan(from int64, fn func(rec *journalRecord, next int64) error) (int64, error) {
	r := io.NewSectionReader(j.f, from, 1<<62)
	off := from
	var head [8]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return off, nil
		}
		n := binary.BigEndian.Uint32(head[:])
		if n > maxJournal {
			return off, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, nil
		}
		if crc32.ChecksumIEEE(payload) != binary.BigEndian.Uint32(head[4:]) {
			return off, nil
		}
		next := off + 8 + int64(n)
		if fn != nil {
			var rec journalRecord
			if err := json.Unmarshal(payload, &rec); err != nil {
				return off, fmt.Errorf("web: upgrade journal record at %d: %w", off, err)
			}
			if err := fn(&rec, next); err != nil {
				return off, err
			}
		}
		off = next
	}
}

// written is the size of the records written whole.
func (j *Journal) written() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// appendLine appends rec to the file at path as one JSON line, on disk
// before it returns.
func appendLine(path string, rec *journalRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// posPath is where the replay keeps how far it got, so a crash during the
// replay does not store the requests before it twice.
func (j *Journal) posPath() string { return j.path + ".pos" }

// replayedTo reads how far an earlier replay got (0: nowhere).
func (j *Journal) replayedTo() int64 {
	b, err := os.ReadFile(j.posPath())
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// markReplayed records that the records before off are stored. It is not
// fsynced: a killed process leaves it in the page cache; after a power
// loss the records since the last write-back are replayed again.
func (j *Journal) markReplayed(off int64) error {
	return os.WriteFile(j.posPath(), []byte(strconv.FormatInt(off, 10)), 0o600)
}

// closeIfDone closes and removes the journal when every record up to off
// is replayed, calling handOver first, under the lock that appends take:
// a request journaled before is replayed, one after is served live. Else
// it reports false and the replay goes on.
func (j *Journal) closeIfDone(off int64, handOver func()) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.size > off {
		return false, nil
	}
	handOver()
	j.closed = true
	j.f.Close()
	if err := os.Remove(j.path); err != nil {
		return true, fmt.Errorf("web: upgrade journal: %w", err)
	}
	_ = os.Remove(j.posPath())
	return true, nil
}

// Close closes the file, leaving it for the next start to replay.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	return j.f.Close()
}

// request rebuilds rec as an incoming request.
func (rec *journalRecord) request() (*http.Request, error) {
	req, err := http.NewRequest(rec.Method, "http://"+rec.Host+rec.Target, bytes.NewReader(rec.Body))
	if err != nil {
		return nil, err
	}
	req.Host = rec.Host
	req.RequestURI = rec.Target
	req.Header = rec.Header
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.RemoteAddr = net.JoinHostPort(rec.IP, "0")
	return req, nil
}
