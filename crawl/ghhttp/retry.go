package ghhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// retry asks again after rate limits, server errors, cut-off answers and network failures,
// waiting with the clock as Classify and the back-off settings say; only a final answer
// (or an error after too many attempts) goes up. It needs a resendable request body
// (bufferBody) and a body read into memory (capBody).
type retry struct {
	clock       Clock
	maxAttempts int
	backoff     time.Duration
	maxBackoff  time.Duration
	logf        func(format string, args ...any)
	m           *meter
	next        http.RoundTripper

	mu      sync.Mutex
	blocked map[string]time.Time // rate-limit category -> no request before
}

func (l *retry) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	category := categoryOf(req)
	attempts, primaryWaits, netFailures := 0, 0, 0
	for {
		if err := l.waitBlocked(ctx, category); err != nil {
			return nil, err
		}
		resp, err := l.next.RoundTrip(resend(req))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var be *BodyError
			if errors.As(err, &be) {
				attempts++
				if attempts >= l.maxAttempts {
					return nil, fmt.Errorf("github %s %s: reading the answer: %w", req.Method, req.URL.Path, be.Err)
				}
				if err := l.wait(ctx, req, "truncated answer", attempts, l.maxAttempts, 0); err != nil {
					return nil, err
				}
				continue
			}
			netFailures++
			if netFailures >= maxNetworkAttempts {
				return nil, fmt.Errorf("github %s %s: %d attempts failed: %w", req.Method, req.URL.Path, netFailures, err)
			}
			if err := l.wait(ctx, req, "network error", netFailures, maxNetworkAttempts, l.shortBackoff(netFailures)); err != nil {
				return nil, err
			}
			continue
		}
		l.noteRemaining(resp, category)
		b, err := bodyBytes(resp)
		if err != nil {
			return nil, fmt.Errorf("github %s %s: reading the answer: %w", req.Method, req.URL.Path, err)
		}
		v := Classify(req, resp, b, l.clock.Now())
		switch v.Limit {
		case NotLimited:
			return resp, nil
		case PrimaryLimit:
			resp.Body.Close()
			primaryWaits++
			l.m.add(func(s *Stats) { s.RateLimited[v.Limit.String()]++; s.Retried++ })
			if primaryWaits > maxPrimaryWaits {
				return nil, fmt.Errorf("github %s %s: still rate limited after %d waits for the reset", req.Method, req.URL.Path, primaryWaits-1)
			}
			wait := v.Wait
			if wait <= 0 {
				wait = l.backoff
			}
			l.logf("github: primary rate limit on %s %s: waiting %s for the reset", req.Method, req.URL.Path, wait.Round(time.Second))
			if err := l.sleep(ctx, wait); err != nil {
				return nil, err
			}
		default:
			resp.Body.Close()
			attempts++
			l.m.add(func(s *Stats) {
				if v.Limit.rateLimit() {
					s.RateLimited[v.Limit.String()]++
				}
				s.Retried++
			})
			if attempts >= l.maxAttempts {
				return nil, fmt.Errorf("github %s %s: %s answer %d times in a row (status %d); giving up for now, run the crawl again to resume", req.Method, req.URL.Path, v.Limit.describe(), attempts, resp.StatusCode)
			}
			wait := v.Wait
			if v.Limit == ServerError {
				wait = l.shortBackoff(attempts)
			}
			if err := l.wait(ctx, req, v.Limit.describe(), attempts, l.maxAttempts, wait); err != nil {
				return nil, err
			}
		}
	}
}

// noteRemaining remembers a success that used the last request of a category, so the
// next request waits for the reset instead of being refused.
func (l *retry) noteRemaining(resp *http.Response, category string) {
	if resp.StatusCode >= 300 || resp.Header.Get("X-Ratelimit-Remaining") != "0" {
		return
	}
	if r := resp.Header.Get("X-Ratelimit-Resource"); r != "" {
		category = r
	}
	v, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.blocked[category] = time.Unix(v, 0).Add(time.Second)
	l.mu.Unlock()
}

func (l *retry) waitBlocked(ctx context.Context, category string) error {
	l.mu.Lock()
	until, ok := l.blocked[category]
	delete(l.blocked, category)
	l.mu.Unlock()
	if !ok {
		return nil
	}
	if d := until.Sub(l.clock.Now()); d > 0 {
		l.logf("github: no %s requests left: waiting %s for the reset", category, d.Round(time.Second))
		return l.sleep(ctx, d)
	}
	return nil
}

// wait backs off before attempt+1: wait if given, else Backoff doubling per attempt up
// to MaxBackoff.
func (l *retry) wait(ctx context.Context, req *http.Request, why string, attempt, max int, wait time.Duration) error {
	if wait <= 0 {
		wait = l.backoff
		for i := 1; i < attempt && wait < l.maxBackoff; i++ {
			wait *= 2
		}
		if wait > l.maxBackoff {
			wait = l.maxBackoff
		}
	}
	l.logf("github: %s on %s %s: waiting %s (attempt %d of %d)", why, req.Method, req.URL.Path, wait.Round(time.Second), attempt, max)
	return l.sleep(ctx, wait)
}

// shortBackoff is the wait before retrying a server error or a network failure: a
// twelfth of Backoff (5s by default), doubling.
func (l *retry) shortBackoff(attempt int) time.Duration {
	d := l.backoff / 12
	for i := 1; i < attempt && d < l.maxBackoff; i++ {
		d *= 2
	}
	return min(d, l.maxBackoff)
}

func (l *retry) sleep(ctx context.Context, d time.Duration) error {
	l.m.add(func(s *Stats) { s.WaitedSeconds += d.Seconds() })
	return l.clock.Sleep(ctx, d)
}
