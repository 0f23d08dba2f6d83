package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRecords(t *testing.T) {
	const (
		a = `{"job":"j1","line":1,"id":"a","done":true}` + "\n"
		b = `{"job":"j1","line":2,"id":"b","done":false}` + "\n"
		c = `{"job":"j1","line":3,"id":"c","done":true}`
	)
	tests := []struct {
		name     string
		file     string
		wantDone []string
		wantEnd  int
		wantOpen bool
		wantErr  string
	}{
		{"empty", "", nil, 0, false, ""},
		{"records", a + b, []string{"a"}, len(a + b), false, ""},
		{"a last line cut short is dropped", a + b + c[:20], []string{"a"}, len(a + b), false, ""},
		{"a whole last record without its newline is kept", a + c, []string{"a", "c"}, len(a + c), true, ""},
		{"blank lines", a + "\n" + b, []string{"a"}, len(a + "\n" + b), false, ""},
		{"a bad line before the end", a + "not json\n" + b, nil, 0, false, "line 2 is not a batch result"},
		{"a JSON line that is no record", `{"x":1}` + "\n", nil, 0, false, "line 1 is not a batch result"},
		{"another job", a + strings.Replace(b, "j1", "j2", 1), nil, 0, false, "line 2 is of job j2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, job, end, open, err := readRecords(strings.NewReader(tt.file))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var ids []string
			for id := range done {
				ids = append(ids, id)
			}
			assert.ElementsMatch(t, tt.wantDone, ids)
			assert.Equal(t, int64(tt.wantEnd), end)
			assert.Equal(t, tt.wantOpen, open)
			if tt.file != "" {
				assert.Equal(t, "j1", job)
			}
		})
	}
}

func TestOpenOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")

	w, done, err := openOutput(path, false)
	require.NoError(t, err)
	assert.Empty(t, done)
	assert.Len(t, w.job, 12)
	require.NoError(t, w.write(&record{Line: 1, ID: "a", Done: true}))
	require.NoError(t, w.write(&record{Line: 2, ID: "b"}))
	require.NoError(t, w.close())
	require.NoError(t, w.close(), "idempotent")
	assert.Error(t, w.write(&record{ID: "c"}), "closed")

	_, _, err = openOutput(path, false)
	assert.ErrorIs(t, err, errOutputExists)

	// A run killed in the middle of a write left half a line: resume drops it and appends after
	// the last whole record.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"job":"` + w.job + `","line":3,"id":"c","do`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	w2, done, err := openOutput(path, true)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true}, done)
	assert.Equal(t, w.job, w2.job, "the job goes on")
	require.NoError(t, w2.write(&record{Line: 3, ID: "c", Done: true}))
	require.NoError(t, w2.close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[2], `"id":"c"`)
	assert.NotContains(t, string(got), `"do`+"\n")

	// A record without its newline is kept, and the next one starts on a line of its own.
	require.NoError(t, os.WriteFile(path, []byte(strings.TrimSuffix(string(got), "\n")), 0o644))
	w3, done, err := openOutput(path, true)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true, "c": true}, done)
	require.NoError(t, w3.write(&record{Line: 4, ID: "d"}))
	require.NoError(t, w3.close())
	_, _, _, _, err = readRecords(strings.NewReader(mustRead(t, path)))
	assert.NoError(t, err)

	_, _, err = openOutput(filepath.Join(dir, "no", "such", "dir"), false)
	var oe *outputError
	assert.ErrorAs(t, err, &oe)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
