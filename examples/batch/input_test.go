package main

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLine(t *testing.T) {
	base, err := url.Parse("http://api.test/v1/")
	require.NoError(t, err)
	tests := []struct {
		line       string
		wantMethod string
		wantURL    string
		wantHeader http.Header
		wantBody   string // "-" for no body
		wantErr    string
	}{
		{"https://x.test/a?b=1", "GET", "https://x.test/a?b=1", http.Header{}, "-", ""},
		{"items/7", "GET", "http://api.test/v1/items/7", http.Header{}, "-", ""},
		{"/items/7", "GET", "http://api.test/items/7", http.Header{}, "-", ""},
		{`{"url":"items/1"}`, "GET", "http://api.test/v1/items/1", http.Header{}, "-", ""},
		{`{"method":"post","url":"/o","body":{"a":[1,2]}}`, "POST", "http://api.test/o",
			http.Header{"Content-Type": {"application/json"}}, `{"a":[1,2]}`, ""},
		{`{"method":"PUT","url":"/o","body":"plain text","headers":{"Content-Type":"text/plain","X-A":["1","2"]}}`, "PUT", "http://api.test/o",
			http.Header{"Content-Type": {"text/plain"}, "X-A": {"1", "2"}}, "plain text", ""},
		{`{"url":"/o","body":null}`, "GET", "http://api.test/o", http.Header{}, "-", ""},
		{`{"url":"/o","body":""}`, "GET", "http://api.test/o", http.Header{}, "", ""},
		{`{"url":"/o"} {"url":"/p"}`, "", "", nil, "", "more than one value"},
		{`{"url":"/o","header":{}}`, "", "", nil, "", `unknown field "header"`},
		{`{"method":"GET"}`, "", "", nil, "", `no "url"`},
		{`{"url":"/o",}`, "", "", nil, "", "invalid JSON request"},
		{`{"url":"/o","method":"GE T"}`, "", "", nil, "", `invalid method "GE T"`},
		{`{"url":"/o","headers":{"Bad Name":"x"}}`, "", "", nil, "", `invalid header name "Bad Name"`},
		{`{"url":"/o","headers":{"X":"a\r\nY: b"}}`, "", "", nil, "", "line break"},
		{`{"url":"/o","headers":{"X":1}}`, "", "", nil, "", "string or an array of strings"},
		{"ftp://x.test/a", "", "", nil, "", "scheme must be http or https"},
		{"http:///a", "", "", nil, "", "no host"},
		{"http://x.test/%zz", "", "", nil, "", "invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			sp, err := parseLine([]byte(tt.line), "GET", base)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantMethod, sp.method)
			assert.Equal(t, tt.wantURL, sp.url)
			assert.Equal(t, tt.wantHeader, sp.header)
			if tt.wantBody == "-" {
				assert.Nil(t, sp.body)
			} else {
				assert.Equal(t, tt.wantBody, string(sp.body))
			}
		})
	}
	_, err = parseLine([]byte("items/1"), "GET", nil)
	assert.ErrorContains(t, err, "relative, and no -url")
}

func TestInputSource(t *testing.T) {
	in := strings.Join([]string{
		"# a comment",
		"/a",
		"",
		"   ",
		"/b",
		"/a",  // a second /a: a request of its own
		"/a ", // the same content once trimmed: a third
		"{bad",
		"/c", // no newline at the end
	}, "\r\n")
	base, _ := url.Parse("http://h.test/")
	read := func(done map[string]bool) ([]item, *inputSource) {
		s := newInputSource(strings.NewReader(in), "DELETE", base, done)
		var items []item
		for {
			it, ok := s.next()
			if !ok {
				return items, s
			}
			items = append(items, it)
		}
	}
	items, s := read(nil)
	require.NoError(t, s.err())
	require.Len(t, items, 6)
	var lines []int
	for _, it := range items {
		lines = append(lines, it.seq)
	}
	assert.Equal(t, []int{2, 5, 6, 7, 8, 9}, lines)
	a := items[0].id
	assert.Len(t, a, 16)
	assert.Equal(t, a+"-2", items[2].id)
	assert.Equal(t, a+"-3", items[3].id)
	assert.Equal(t, "DELETE", items[0].spec.method)
	assert.Equal(t, "http://h.test/c", items[5].spec.url)
	assert.Error(t, items[4].err, "a bad line is an item with its error")
	assert.Zero(t, s.skipped())

	// The ids do not depend on what is done: skipping keeps counting occurrences.
	items2, s2 := read(map[string]bool{a: true, items[3].id: true})
	require.Len(t, items2, 4)
	assert.Equal(t, a+"-2", items2[1].id)
	assert.Equal(t, 2, s2.skipped())
	n, err := countPending(strings.NewReader(in), map[string]bool{a: true})
	require.NoError(t, err)
	assert.Equal(t, 5, n)
}

func TestReadLineBounds(t *testing.T) {
	long := strings.Repeat("x", maxLineBytes+1)
	r := bufio.NewReaderSize(strings.NewReader("ok\n"+long+"\nnext\n"+long), 16)
	line, err := readLine(r, maxLineBytes)
	assert.NoError(t, err)
	assert.Equal(t, "ok", string(line))
	_, err = readLine(r, maxLineBytes)
	assert.ErrorIs(t, err, errLineTooLong)
	line, err = readLine(r, maxLineBytes)
	assert.NoError(t, err)
	assert.Equal(t, "next", string(line), "the long line was skipped to its end")
	_, err = readLine(r, maxLineBytes)
	assert.ErrorIs(t, err, errLineTooLong, "a long last line without a newline")
	_, err = readLine(r, maxLineBytes)
	assert.ErrorIs(t, err, io.EOF)

	s := newInputSource(strings.NewReader(long+"\n/x\n"), "GET", &url.URL{Scheme: "http", Host: "h"}, nil)
	it, ok := s.next()
	require.True(t, ok)
	assert.ErrorIs(t, it.err, errLineTooLong)
	assert.Equal(t, 1, it.seq)
	it, ok = s.next()
	require.True(t, ok)
	assert.Equal(t, 2, it.seq)
	assert.NoError(t, it.err)
}

func TestCountSource(t *testing.T) {
	s := &countSource{n: 5, method: "POST", target: "http://h/items", body: true, done: map[string]bool{"2": true, "4": true, "9": true}}
	assert.Equal(t, 3, s.pending())
	var got []string
	for {
		it, ok := s.next()
		if !ok {
			break
		}
		got = append(got, it.id+"="+string(it.spec.body))
	}
	assert.Equal(t, []string{`1={"item":0}`, `3={"item":2}`, `5={"item":4}`}, got)
	assert.Equal(t, 2, s.skipped())
}
