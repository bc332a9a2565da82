package app_test

// The balance history joins the layout check of every console page.
func init() {
	extraUserLayoutPages = append(extraUserLayoutPages, layoutPage{"ledger", "/console/ledger", "main"})
}
