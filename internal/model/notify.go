package model

// SendAnswer is how a notification's server answered a send (an SMTP
// server, a chat webhook): the admin page turns it into plain words and
// shows the server's own.
type SendAnswer struct {
	// OK says the server took the message.
	OK bool
	// Stage is the step the answer came at: connect, tls, auth, from, to,
	// data (SMTP), http (a webhook) or setup (nothing was sent).
	Stage string
	// Code is the SMTP reply code or the HTTP status; 0 when no answer
	// came.
	Code int
	// Text is the server's own words, or the network's error.
	Text string
}
