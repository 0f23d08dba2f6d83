package redisthrottle

import "net/http"

var (
	ok200     = &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
	throttled = &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
)
