package lro_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/client"
	"github.com/steadyhttp/steady/lro"
	"github.com/steadyhttp/steady/testserver"
)

// A job API answers a create with 202 Accepted and an Operation-Location; Wait polls it through
// steady's client (paced, retried) until the operation has succeeded, and returns its result.
func Example() {
	ops, err := testserver.NewOperations(testserver.Operations{Duration: 300 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	srv, err := testserver.New(testserver.WithHandler(ops),
		testserver.WithRules(testserver.Rule{Limit: 20, Window: time.Second}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := client.New()
	resp, err := c.Post(srv.URL()+"/jobs", "application/json", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, resp.Header.Get("Operation-Location") != "")

	errFailed := errors.New("job failed")
	result, err := lro.Wait(context.Background(), c, resp, func(r *http.Response) (string, bool, error) {
		var st testserver.OperationStatus
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			return "", false, err
		}
		switch st.Status {
		case testserver.OperationSucceeded:
			return st.Result, true, nil
		case testserver.OperationFailed:
			return "", true, fmt.Errorf("%w: %s", errFailed, st.Error)
		}
		return "", false, nil // still running
	}, lro.WithInterval(50*time.Millisecond), lro.WithMaxInterval(100*time.Millisecond))
	if err != nil {
		panic(err)
	}
	fmt.Println(result)
	// Output:
	// 202 true
	// operation 1 done
}
