package web_test

// The WhatsApp Business account the tests here set sites up with (the
// webhook's own tests, and its bodies, are in internal/whatsapp).

const (
	wabaID    = "102290129340398"
	datasetID = "1283471935762519"
	ctwaClid  = "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"
	bsuid     = "TR.1502576394655843"
)
