package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Message is one notification.
type Message struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// DeliveryError reports the message a Notifier could not deliver.
type DeliveryError struct {
	// Index is the message's position in the slice given to Send; ID is its ID.
	Index int
	ID    string
	// Status is the webhook's final status, 0 when no response was obtained.
	Status int
	// Err is the transport error when no response was obtained, else nil.
	Err error
}

func (e *DeliveryError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("notifier: message %d (%s) not delivered: %v", e.Index, e.ID, e.Err)
	}
	return fmt.Sprintf("notifier: message %d (%s) not delivered: status %d", e.Index, e.ID, e.Status)
}

// Unwrap returns the transport error, if any.
func (e *DeliveryError) Unwrap() error { return e.Err }

// Notifier posts messages to a webhook URL one at a time, in order. It is the "code under test"
// of this package: it knows nothing about rate limits; the *http.Client it is given does. A
// Notifier is safe for concurrent use, but concurrent Sends do not keep a common order.
type Notifier struct {
	hc  *http.Client
	url string
}

// NewNotifier returns a Notifier that posts to url through hc (http.DefaultClient when nil).
func NewNotifier(hc *http.Client, url string) *Notifier {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Notifier{hc: hc, url: url}
}

// Send posts each message as JSON, in order, with its ID as the Idempotency-Key (so that a client
// may retry it safely, and a server that honours the key processes it once). It returns how many
// messages were delivered (a 2xx answer) and stops at the first that was not, with a
// *DeliveryError.
func (n *Notifier) Send(ctx context.Context, msgs []Message) (int, error) {
	for i, m := range msgs {
		if err := n.post(ctx, m); err != nil {
			var de *DeliveryError
			if errors.As(err, &de) {
				de.Index = i
			}
			return i, err
		}
	}
	return len(msgs), nil
}

// post delivers one message.
func (n *Notifier) post(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", m.ID)
	resp, err := n.hc.Do(req)
	if err != nil {
		return &DeliveryError{ID: m.ID, Err: err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &DeliveryError{ID: m.ID, Status: resp.StatusCode}
	}
	return nil
}
