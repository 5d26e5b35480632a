package dashboard

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"
)

// Mailer sends the dashboard's e-mails (plain text).
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// SMTPMailer sends e-mail through an SMTP server with go-mail (a maintained client that
// handles STARTTLS, implicit TLS and SMTP authentication).
type SMTPMailer struct {
	from string
	opts []mail.Option
	host string
}

// NewSMTPMailer reads SMTP_URL: smtp://user:pass@host:587 (STARTTLS required), smtps://
// user:pass@host:465 (TLS from the start). ?tls=opportunistic uses STARTTLS when offered and
// ?tls=none never (a local relay); a user name turns on authentication.
func NewSMTPMailer(rawURL, from string) (*SMTPMailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("dashboard: SMTP_URL is not a URL like smtp://user:pass@host:587")
	}
	opts := []mail.Option{mail.WithTimeout(15 * time.Second)}
	port := 587
	switch u.Scheme {
	case "smtps":
		port = 465
		opts = append(opts, mail.WithSSL())
	case "smtp":
		switch u.Query().Get("tls") {
		case "", "mandatory":
			opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
		case "opportunistic":
			opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
		case "none":
			opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
		default:
			return nil, fmt.Errorf("dashboard: SMTP_URL tls=%q: want mandatory, opportunistic or none", u.Query().Get("tls"))
		}
	default:
		return nil, fmt.Errorf("dashboard: SMTP_URL scheme %q: want smtp or smtps", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("dashboard: SMTP_URL port %q is not a number", p)
		}
	}
	opts = append(opts, mail.WithPort(port))
	if user := u.User.Username(); user != "" {
		pass, _ := u.User.Password()
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(user), mail.WithPassword(pass))
	}
	return &SMTPMailer{from: from, opts: opts, host: u.Hostname()}, nil
}

// Send delivers one message over a fresh connection.
func (m *SMTPMailer) Send(ctx context.Context, to, subject, body string) error {
	msg := mail.NewMsg()
	if err := msg.From(m.from); err != nil {
		return fmt.Errorf("dashboard: mail from: %w", err)
	}
	if err := msg.To(to); err != nil {
		return fmt.Errorf("dashboard: mail to: %w", err)
	}
	msg.Subject(subject)
	msg.SetBodyString(mail.TypeTextPlain, body)
	client, err := mail.NewClient(m.host, m.opts...)
	if err != nil {
		return fmt.Errorf("dashboard: mail client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("dashboard: send mail: %w", err)
	}
	return nil
}

// LogMailer writes e-mails to the log instead of sending them: without SMTP_URL (make run)
// the sign-in link is read there.
type LogMailer struct{ Log *slog.Logger }

// Send logs the message.
func (m LogMailer) Send(_ context.Context, to, subject, body string) error {
	m.Log.Info("dashboard e-mail (SMTP_URL not set, so it is logged, not sent)", "to", to, "subject", subject, "body", body)
	return nil
}
