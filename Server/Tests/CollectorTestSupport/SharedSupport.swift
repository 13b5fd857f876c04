// The support both packages' suites share (NFLogTestSupport: child processes, temporary
// directories, the hang limit, a held SQLite write lock, completion logs), re-exported so that
// every suite of this package reaches it through CollectorTestSupport, as it reaches the stores.
@_exported import NFLogTestSupport
