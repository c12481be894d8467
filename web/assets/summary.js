// Words of the page's summary: whether the server is ready and for what
// it waits, where gRPC listens, whether the NVIDIA GPUs serve, the
// warnings and errors of the last hour.

// readyWords says whether the server is ready and, if not, for what.
export function readyWords(st) {
  if (st.ready) return 'yes';
  const why = [];
  const p = st.profiling;
  if (p) why.push(`profiling ${p.model} on ${p.device}, ${p.profile} of ${p.of}`);
  if (st.waiting_for && st.waiting_for.length) why.push('waiting for ' + st.waiting_for.join(', '));
  if (st.not_ready_for && st.not_ready_for.length) why.push('strict readiness: ' + st.not_ready_for.join(', ') + ' cannot be served');
  return why.length ? `no (${why.join('; ')})` : 'no';
}

// grpcWords says where the gRPC listener is: off when grpc_listen is
// empty, a dash from a daemon that does not say.
export function grpcWords(addr) {
  if (addr === undefined) return '–';
  return addr === '' ? 'off (grpc_listen is empty)' : addr;
}

// engineWords says in a few words whether the NVIDIA GPUs serve.
export function engineWords(e) {
  if (!e || !e.gpus) return 'none found';
  if (e.using_gpus) return `${e.gpus} NVIDIA, ${e.provider}`;
  return `${e.gpus} NVIDIA, not used`;
}

// problemWords counts the warning and error events of the status's window
// (recent_problems); a dash from a daemon that does not count them.
export function problemWords(p) {
  if (!p) return '–';
  const parts = [];
  if (p.warnings) parts.push(p.warnings === 1 ? '1 warning' : `${p.warnings} warnings`);
  if (p.errors) parts.push(p.errors === 1 ? '1 error' : `${p.errors} errors`);
  return parts.length ? parts.join(', ') : 'no warnings';
}
