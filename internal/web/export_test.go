package web

// SafeNext is safeNext, for the tests of the admin's post-login redirect.
var SafeNext = safeNext
