package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ErrBadRepo is matched (errors.Is) by the error of a repository name that is not "owner/name".
var ErrBadRepo = errors.New("repository must be owner/name")

// Issue is one issue of a repository, as the API lists it.
type Issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	State  string `json:"state"`
}

// APIError is the error of a call the API answered with a status other than 200. Status is the
// HTTP status and Message the API's own message.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("api: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// RepoClient calls a GitHub-style REST API with one API token. It does nothing about rate limits:
// the *http.Client it is given does (see newAPIClient). It is safe for concurrent use.
type RepoClient struct {
	hc    *http.Client
	base  *url.URL
	token string
}

// NewRepoClient returns a RepoClient for the API at baseURL (an absolute http or https URL),
// sending requests through hc with token as its bearer token.
func NewRepoClient(hc *http.Client, baseURL, token string) (*RepoClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: must be an absolute http or https URL", baseURL)
	}
	if hc == nil {
		return nil, errors.New("nil *http.Client")
	}
	return &RepoClient{hc: hc, base: u, token: token}, nil
}

// maxBody bounds how much of a response the client reads.
const maxBody = 1 << 20

// ListIssues returns the issues of repo ("owner/name"). A status other than 200 is an *APIError.
func (c *RepoClient) ListIssues(ctx context.Context, repo string) ([]Issue, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%w: %q", ErrBadRepo, repo)
	}
	u := c.base.JoinPath("repos", owner, name, "issues")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var m struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &m)
		return nil, &APIError{Status: resp.StatusCode, Message: m.Message}
	}
	var issues []Issue
	if err := json.Unmarshal(body, &issues); err != nil {
		return nil, fmt.Errorf("decoding the issues of %s: %w", repo, err)
	}
	return issues, nil
}
