// Package web holds the web console's look: html/template pages, the
// embedded stylesheet and script, and charts drawn as SVG on the server.
// Handlers in package console fill the view models of views.go and call
// Pages.Render; nothing here reads the store.
package web
