package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/contentapi/contentapi/internal/dashboard"
)

func newOutbox(t *testing.T, box *mailbox, c dashboard.OutboxConfig) *dashboard.Outbox {
	t.Helper()
	m, err := dashboard.NewSMTPMailer("smtp://"+box.addr+"?tls=none", "ContentAPI <no-reply@contentapi.test>")
	if err != nil {
		t.Fatal(err)
	}
	return dashboard.NewOutbox(m, slog.New(slog.DiscardHandler), c)
}

// Send returns while the SMTP server is still holding the message; the message arrives
// when the server lets it through. A synchronous Send would wait for the server forever.
func TestOutboxSendDoesNotWaitForTheServer(t *testing.T) {
	box := startMailbox(t)
	box.entered, box.hold = make(chan struct{}, 1), make(chan struct{})
	o := newOutbox(t, box, dashboard.OutboxConfig{})
	if err := o.Send(context.Background(), "a@example.com", "one", "body"); err != nil {
		t.Fatal(err)
	}
	<-box.entered // the server has the message and holds its answer
	close(box.hold)
	if m := box.Next(t); m.Subject != "one" || m.To != "a@example.com" {
		t.Fatalf("got %+v", m)
	}
	if err := o.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A temporary refusal is tried again; a queue that is full says so at once; Close sends
// what is queued, and reports what it could not send before its context ended.
func TestOutboxRetriesBoundsAndDrains(t *testing.T) {
	box := startMailbox(t)
	box.rejects.Store(2)
	o := newOutbox(t, box, dashboard.OutboxConfig{Backoff: time.Millisecond})
	if err := o.Send(context.Background(), "a@example.com", "third time", "body"); err != nil {
		t.Fatal(err)
	}
	if m := box.Next(t); m.Subject != "third time" {
		t.Fatalf("got %+v", m)
	}
	if err := o.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := o.Send(context.Background(), "a@example.com", "late", "body"); err == nil {
		t.Fatal("a closed outbox took a message")
	}

	box = startMailbox(t)
	box.entered, box.hold = make(chan struct{}, 3), make(chan struct{})
	o = newOutbox(t, box, dashboard.OutboxConfig{Size: 2, Workers: 1})
	for i := range 3 {
		if err := o.Send(context.Background(), "a@example.com", fmt.Sprint("m", i), "body"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-box.entered // m0 is at the server: m1 and m2 fill the queue
		}
	}
	if err := o.Send(context.Background(), "a@example.com", "m3", "body"); !errors.Is(err, dashboard.ErrOutboxFull) {
		t.Fatalf("full queue: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Close(ctx); err == nil || !strings.Contains(err.Error(), "3 e-mails not sent") {
		t.Fatalf("close while the server holds: %v", err)
	}
	close(box.hold)
	o.Wait()
	for i := range 3 {
		if m := box.Next(t); m.Subject != fmt.Sprint("m", i) {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
}

// A message the server keeps refusing is tried three times in all, then given up (and
// logged); the outbox goes on.
func TestOutboxGivesUpAfterThreeTries(t *testing.T) {
	box := startMailbox(t)
	box.rejects.Store(5)
	o := newOutbox(t, box, dashboard.OutboxConfig{Backoff: time.Millisecond})
	if err := o.Send(context.Background(), "a@example.com", "refused", "body"); err != nil {
		t.Fatal(err)
	}
	o.Wait()
	if left := box.rejects.Load(); left != 2 {
		t.Fatalf("%d refusals left of 5; want 3 tries", left)
	}
	box.rejects.Store(0)
	if err := o.Send(context.Background(), "a@example.com", "next", "body"); err != nil {
		t.Fatal(err)
	}
	if m := box.Next(t); m.Subject != "next" {
		t.Fatalf("got %+v after the refused message", m)
	}
	if err := o.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Sign-in and registration answer while the mail server holds their e-mails.
func TestSignInDoesNotWaitForMail(t *testing.T) {
	e := startEnv(t)
	e.Mail.entered, e.Mail.hold = make(chan struct{}, 2), make(chan struct{})
	email := uniqueEmail("slowmail")
	e.register(t, email)
	<-e.Mail.entered
	b := e.newBrowser(t)
	p := b.Get("/dashboard/signin")
	sent := b.Post("/dashboard/signin", url.Values{"csrf": {p.CSRF(t)}, "email": {email}})
	if sent.Status != http.StatusOK || !strings.Contains(sent.Body, "Check your e-mail") {
		t.Fatalf("sign-in: %d %s", sent.Status, sent.Body)
	}
	close(e.Mail.hold)
	<-e.Mail.entered
	// Both are sent, in either order: the outbox's senders run side by side.
	subjects := []string{e.Mail.Next(t).Subject, e.Mail.Next(t).Subject}
	for _, want := range []string{"Confirm", "sign-in link"} {
		if !strings.Contains(subjects[0], want) && !strings.Contains(subjects[1], want) {
			t.Fatalf("want %q among %q", want, subjects)
		}
	}
}
