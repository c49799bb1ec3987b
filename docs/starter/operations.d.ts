// Generated from spec/schema/operations.json by `subagent-conformance docs`: do not edit.
// The JSON shape of every adapter operation's input and output (the schema states more
// than types can: the suite validates every value against it).

/** A selection binding (vocabulary selection.binding). */
export type Binding = "chunk-events" | "embedded-stream" | "text-stream";

/** A product provider (vocabulary adapter-protocol.provider). */
export type Provider = "claude-code" | "codex";

/** An npm package release, MAJOR.MINOR.PATCH with an optional prerelease. */
export type ProductVersion = string;

/** An operation name (vocabulary adapter-protocol.operation). */
export type Operation = "select_output" | "fold_output" | "settle_run" | "render_tool_result" | "job_outcome" | "job_output" | "job_notice" | "settlement_notice" | "format_diagnostic" | "bound_diagnostic" | "claude_code_outcome" | "codex_outcome" | "run_claude_code" | "run_codex";

/** What an adapter claims: the Python module's CONFORMANCE value, or the output of the exec protocol's describe request. Every claim key but `background` and `settlements` is required (an empty claim is written as [] or {}; `background` absent claims no background dispatch mode, `settlements` absent claims every settle_run path); `operations`, optional, lists the operations the adapter implements (absent: every one its claims require); `implementation` is optional provenance; an unknown key is a usage error, so a misspelt claim is never silently ignored. */
export type Declaration = {
  /** The adapter protocol version (vocabulary adapter-protocol.protocol_version). */
  protocol: "1";
  /** The selection bindings the adapter implements. */
  bindings: Binding[];
  /** The product providers the adapter implements, each with the product package version it was built against; the version must be the one the provider's area file locks. */
  providers: {
    "claude-code"?: ProductVersion;
    codex?: ProductVersion;
  };
  /** The claimed providers whose managed-process operation (run_claude_code / run_codex) the adapter also implements. */
  process_drivers: Provider[];
  /** Optional provenance, not a claim: the name and version of the implementation under test, printed in the report and the conformance matrix. */
  implementation?: {
    name: string;
    version: string;
  };
  /** Optional: the background dispatch modes the adapter implements (vocabulary background.dispatch): `job` for one-shot background Jobs (job_outcome, job_output, job_notice), `notice` for continuable settlement notices (settlement_notice). Absent means none: an implementation without a Job runtime leaves it out. */
  background?: ("job" | "notice")[];
  /** Optional: the settle_run settlement paths the adapter implements (vocabulary results.settlement, table adapter-protocol.settlements): `in-process-one-shot`, `continuable`, `out-of-process`. Absent means all three; a path is tested only with a claimed binding it takes. */
  settlements?: ("in-process-one-shot" | "continuable" | "out-of-process")[];
  /** Optional: exactly the operations the adapter implements, each one its claims require (adapter-protocol ADP-025); tests of any other operation are not applicable. Absent means every operation the claims require (table adapter-protocol.operations, column required_when). */
  operations?: Operation[];
};

/** A ContentBlock of the session format (merge-extensible: only `type` is pinned). */
export type ContentBlock = CommonContentBlock;

export type ContentBlocks = ContentBlock[];

/** A SessionEvent envelope. Only `type` and `data` are read by the rules; the envelope keys are pinned, `data` and any further envelope keys (surfaceOp, sourceEventSeqs, ignorable) are left open. */
export type SessionEvent = {
  type: string;
  seq: number;
  time: number;
  data: {
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** One fold step: an event pushed with push(event), or raw text pushed with pushText(text). */
export type Step = {
  event: SessionEvent;
} | {
  text: string;
};

/** The selection rule's value: the selected content blocks, or null when nothing is selected. */
export type Selection = null | ContentBlocks;

/** SubagentResult: the terminal result of a run. `stopReason` is merge-extensible (any string; the five of vocabulary results.stop_reason are the ones this contract names). No other key is allowed: there is no usage field, and `structured` (outputSchema capture) is outside this contract. */
export type SubagentResult = {
  output: ContentBlocks;
  stopReason: string;
  diagnostic?: string;
};

/** The fields of the run's `subagent/end` lifecycle event that this contract governs (the identity fields runId, provider, id and local are not part of it). */
export type RunEnd = {
  stopReason: string;
  lastAssistantMessage?: ContentBlocks;
};

/** How an out-of-process run's attempt settled: it returned a result, or it rejected (a transport or process failure), with the provider's collected diagnostic when it has one (not yet bounded). */
export type SettleAttempt = {
  outcome: "returned";
  /** A result a provider can return: a diagnostic only with a stop reason other than completed and aborted (DIA-014, results RES-028). */
  result: SubagentResult;
} | {
  outcome: "rejected";
  diagnostic?: string;
};

/** A complete list of child-owned events, read under one event binding (select_output is defined for chunk-events and embedded-stream; text-stream is exercised through fold_output). */
export type SelectOutputInput = {
  binding: "chunk-events" | "embedded-stream";
  events: SessionEvent[];
};

export type SelectOutputOutput = Selection;

/** Steps fed one by one to a fresh fold of the binding. */
export type FoldOutputInput = {
  binding: Binding;
  steps: Step[];
};

/** One collect() value per input step, in step order (so as many elements as steps). */
export type FoldOutputOutput = Selection[];

/** One settled run. `steps` is the run's observed log; its first `boundary` steps are not owned by the run (a fork's seeded parent events, a continuable child's earlier epochs) and never contribute. Three settlement paths: an in-process one-shot run (shape one-shot, driver in-process: turnEnd and cancelled), a continuable epoch (shape continuable, driver in-process: turnEnd, droppedUnrun and teardownFailed) and an out-of-process one-shot run (shape one-shot, driver out-of-process: cancelled and attempt). `turnEnd` is the reason kind of the last consumed turn/end, null when no turn/end was consumed; any string outside vocabulary results.turn_end_kind is an unknown kind. The input domain is results RES-028: bindings per driver, a log as the agent loop writes it, and turnEnd/droppedUnrun as that log's own turn facts. */
export type SettleRunInput = {
  shape?: "one-shot";
  driver?: "in-process";
  /** text-stream is an out-of-process (ACP) transport only (results RES-028). */
  binding?: "chunk-events" | "embedded-stream";
  [key: string]: unknown;
} | {
  shape?: "continuable";
  driver?: "in-process";
  /** text-stream is an out-of-process (ACP) transport only (results RES-028). */
  binding?: "chunk-events" | "embedded-stream";
  [key: string]: unknown;
} | {
  shape?: "one-shot";
  driver?: "out-of-process";
  [key: string]: unknown;
};

/** The run's SubagentResult and the contract fields of its subagent/end event. */
export type SettleRunOutput = {
  result: SubagentResult;
  end: RunEnd;
};

/** A SubagentResult as settlement produces it: a diagnostic, at most 4096 UTF-8 bytes (DIA-021), only with a stop reason other than completed; an aborted result may carry one (a remotely diagnosed abort, background BGD-003) (results RES-029). */
export type RenderToolResultInput = SubagentResult;

/** The parent's tool result: whether it is an error, and its text content. */
export type RenderToolResultOutput = {
  isError: boolean;
  text: string;
};

/** A one-shot Job whose child settled: the SubagentResult the run settled to (its diagnostic, when present, at most 4096 UTF-8 bytes: BGD-013). */
export type JobResultInput = {
  result: SubagentResult;
};

/** A one-shot Job whose start() rejected: the rejection and whether the Job's cancellation had been requested. */
export type JobStartFailureInput = {
  startFailure: {
    /** The rejection's message: a provider's start rejection text (background.start_rejections). */
    message: string;
    /** Whether the rejection aggregates a startup and a cleanup failure (an AggregateError upstream). */
    aggregate: boolean;
    /** The raw error the rejection keeps on its cause chain; it never reaches a presentation. */
    cause?: string;
  };
  cancelled: boolean;
};

/** What a one-shot background Job settles from: the child's result, or a failed start. */
export type JobInput = JobResultInput | JobStartFailureInput;

export type JobOutcomeInput = JobInput;

/** The Job's terminal outcome (JobOutcome): its status, its final text (completed) and its detail (failed). Which keys a status carries is the rules' (BGD-001 to BGD-008), not the schema's, so that a misplaced key is blamed on its rule. */
export type JobOutcomeOutput = {
  status: "completed" | "killed" | "failed";
  output?: string;
  detail?: string;
};

export type JobOutputInput = JobInput;

/** What the job_output tool shows the parent once the Job has settled. */
export type JobOutputOutput = {
  text: string;
};

/** A settled one-shot Job as its completion notice names it: its id, its label (the task description the parent wrote: any text) and the job_outcome input it settled from. */
export type JobNoticeInput = {
  jobId: string;
  label: string;
  settled: JobInput;
};

/** The completion notice the Job's owner receives: its text and the collapsed summary row. */
export type JobNoticeOutput = {
  text: string;
  summary: string;
};

/** A continuable child's settled epoch: the child id the parent knows and the epoch's result (no diagnostic: a continuable epoch never has one, RES-009 and RES-014). */
export type SettlementNoticeInput = {
  childId: string;
  result: {
    output: ContentBlocks;
    stopReason: string;
  };
};

/** The notice the parent receives: its content blocks and the collapsed summary row. */
export type SettlementNoticeOutput = {
  content: ContentBlocks;
  summary: string;
};

export type BoundDiagnosticInput = {
  text: string;
};

export type BoundDiagnosticOutput = {
  text: string;
};

/** {kind, facts}: a text kind of vocabulary diagnostic.text_kind and the structured facts of that kind for one product, shaped as the facts of diagnostic.yaml's line_vectors (diagnostic.json#/$defs/format_request); no other key. The domain is the facts a provider can extract (DIA-008, DIA-009): each stage with a category its stages row lists, an httpStatus only on a Codex connection or stream variant and never on Claude Code, and each kind only with the stages that surface in it. */
export type FormatDiagnosticInput = DiagnosticFormatRequest;

/** {text}: the provider text of that kind for those facts. */
export type FormatDiagnosticOutput = {
  text: string;
};

/** One Claude Code run as the provider observed it: the permission mode, the SDK messages and permission callbacks in order, the exception that ended the stream (if any), the managed process outcome observed at classification time, and local cancellation. The shape is claude-code.yaml's outcome_vectors scenario. */
export type ClaudeCodeOutcomeInput = ClaudeCodeScenario;

/** The run's SubagentResult fields (stopReason, output, diagnostic when present), by shape (claude-code.json#/$defs/outcome); the values are the oracle's to judge. */
export type ClaudeCodeOutcomeOutput = ClaudeCodeOutcome;

/** One Codex run as the provider observed it: the permission mode, the thread id, the app-server frames, stderr chunks, stdout end and process exit in observation order, and local cancellation. The shape is codex.yaml's outcome_vectors scenario. */
export type CodexOutcomeInput = CodexScenario;

/** The run's SubagentResult fields and the replies the provider sent to server requests, by shape (codex.json#/$defs/outcome); the values are the oracle's to judge. */
export type CodexOutcomeOutput = CodexOutcome;

/** One call of a managed claude-code run batch: every run of `runs` is started so that the runs overlap in time (all are started before any is disposed). Each run is one start(), the result, and dispose() called twice. */
export type RunClaudeCodeInput = {
  /** The product version the suite tests (the adapter's claimed one), filled in by the suite on every call. */
  productVersion?: ProductVersion;
  runs: ClaudeCodeRun[];
};

/** The outcomes of the Claude Code runs, in the order of the input's runs. */
export type RunClaudeCodeOutput = {
  runs: RunOutcome[];
};

/** One call of a managed codex run batch: every run of `runs` is started so that the runs overlap in time (all are started before any is disposed). Each run is one start(), the result, and dispose() called twice. */
export type RunCodexInput = {
  /** The product version the suite tests (the adapter's claimed one), filled in by the suite on every call. */
  productVersion?: ProductVersion;
  runs: CodexRun[];
};

/** The outcomes of the Codex runs, in the order of the input's runs. */
export type RunCodexOutput = {
  runs: RunOutcome[];
};

/** The input of the exec protocol's describe request: the empty object. */
export type DescribeInput = Record<string, never>;

export type DescribeOutput = Declaration;

/** One line the suite writes to an exec adapter's stdin. */
export type ExecRequest = {
  id: number;
  op: "describe" | Operation;
  input: unknown;
};

/** One line an exec adapter writes to its stdout: the operation's output, or an error. */
export type ExecResponse = {
  id: number;
  output: unknown;
} | {
  id: number;
  /** Further keys (a traceback, a code) are allowed; the suite shows them in the failure. */
  error: {
    message: string;
    [key: string]: unknown;
  };
};

/** One managed Claude Code run. The provider appends to `argv` the flags it passes to the CLI and writes the task to the CLI's stdin as a stream-json user message. */
export type ClaudeCodeRun = {
  /** The product command (at least the executable). */
  argv: string[];
  /** The one-shot task as content blocks; may be empty or hold non-text blocks (the rejection rows of table startup_rejections). */
  task: ContentBlocks;
  /** The parent session's working directory; null when the parent has none. It may be unusable (missing, a file). */
  cwd: string | null;
  /** The child's whole environment. The suite adds SUBAGENT_CONFORMANCE_RUN to find every process of the run afterwards. */
  env: {
    [key: string]: string;
  };
  /** Local cancellation of the request (its abort signal): none, already aborted before start() is called, or aborted this many milliseconds after start() was called; `reason` is what the abort signal carries (raw text a provider must never copy). */
  cancel: null | {
    before_start: true;
    reason?: string;
  } | {
    after_ms: number;
    reason?: string;
  };
  /** null: dispose() is called once the result settled. A number: dispose() is called that many milliseconds after start() was called, settled or not. */
  dispose_after_ms: number | null;
  mode: "dontAsk" | "acceptEdits" | "auto" | "plan" | "bypassPermissions";
  /** Steps the driver must make fail: it performs the step, then behaves exactly as if the step had thrown an error whose message is a canary (which must never appear in any text). query_construction (the SDK's query() throws after it spawned the CLI, before the run is published: its construction lasts until the CLI's first output besides the control protocol, a stream-json message, a line that is not JSON, or the end of its stdout once it exited, so that the script decides whether the CLI is still alive when startup fails; a cancellation of the request before that output ends the construction as cancelled), close_query (closing the SDK query), tree_wait (waiting for the process tree to exit), final_outcome (obtaining the direct child's final outcome). Because the step itself was performed, no process of the run is left afterwards. */
  faults?: ("query_construction" | "close_query" | "tree_wait" | "final_outcome")[];
};

/** One managed Codex run. `argv` replaces the whole app-server command (CDX-052). */
export type CodexRun = {
  /** The product command (at least the executable). */
  argv: string[];
  /** The one-shot task as content blocks; may be empty or hold non-text blocks (the rejection rows of table startup_rejections). */
  task: ContentBlocks;
  /** The parent session's working directory; null when the parent has none. It may be unusable (missing, a file). */
  cwd: string | null;
  /** The child's whole environment. The suite adds SUBAGENT_CONFORMANCE_RUN to find every process of the run afterwards. */
  env: {
    [key: string]: string;
  };
  /** Local cancellation of the request (its abort signal): none, already aborted before start() is called, or aborted this many milliseconds after start() was called; `reason` is what the abort signal carries (raw text a provider must never copy). */
  cancel: null | {
    before_start: true;
    reason?: string;
  } | {
    after_ms: number;
    reason?: string;
  };
  /** null: dispose() is called once the result settled. A number: dispose() is called that many milliseconds after start() was called, settled or not. */
  dispose_after_ms: number | null;
  mode: "never" | "approve-for-me" | "dangerously-bypass-approvals-and-sandbox";
  /** Teardown steps the driver must make fail: it performs the step, then behaves exactly as if the step had thrown an error whose message is a canary (which must never appear in any text). tree_wait (waiting for the process tree to exit: the tree is gone afterwards, and what the wait observed of the child, such as the signal its termination caused, the driver may show as observed, CDX-067). Because the step itself was performed, no process of the run is left afterwards. */
  faults?: "tree_wait"[];
};

/** How one dispose() call settled. */
export type Settlement = {
  resolved: true;
} | {
  rejected: string;
};

/** What one managed run showed: start() (published, or its rejection text), the SubagentResult (null exactly when start() rejected) and the settlements of two dispose() calls (none when start() rejected). */
export type RunOutcome = {
  start?: unknown;
  result?: {
    [key: string]: unknown;
  };
  dispose?: unknown;
  [key: string]: unknown;
} | {
  start?: unknown;
  result?: null;
  dispose?: unknown;
  [key: string]: unknown;
};

/** A ContentBlock of the session format; the union is merge-extensible, so only `type` is pinned. */
export type CommonContentBlock = {
  type: string;
  [key: string]: unknown;
};

/** A text kind and the structured facts of that kind for one product: the input of the format_diagnostic operation, and the kind and facts of every line_vectors row. The facts of each kind are those the line_vectors description names; a null optional value means "not observed". The definition leaves other keys open so that a line_vectors row can add its name, covers and expected; operations.json closes it. */
export type DiagnosticFormatRequest = unknown;

export type ClaudeCodeScenario = {
  mode: "dontAsk" | "acceptEdits" | "auto" | "plan" | "bypassPermissions";
  events: ClaudeCodeEvent[];
  exception?: {
    message: string;
  };
  outcome?: ClaudeCodeProcessOutcome | null;
  cancelled?: boolean;
  /** The product version the suite tests (the adapter's claimed one), filled in by the suite on every call; an operation maps that version's union. Absent in the spec's vectors. */
  productVersion?: string;
};

/** What claude_code_outcome may answer: a SubagentResult's fields by shape only. Which stop reason, output and diagnostic are right is the oracle's to judge, so that a wrong value is blamed on the requirement it breaks rather than on the adapter protocol; #/$defs/expected is the stricter shape of the spec's own vectors. */
export type ClaudeCodeOutcome = {
  stopReason: "completed" | "aborted" | "error" | "max-tokens" | "refusal";
  output: ClaudeCodeTextBlock[];
  diagnostic?: string;
};

export type CodexScenario = {
  mode: "never" | "approve-for-me" | "dangerously-bypass-approvals-and-sandbox";
  thread_id: string;
  events: CodexEvent[];
  cancelled?: boolean;
  /** The product version the suite tests (the adapter's claimed one), filled in by the suite on every call; an operation maps that version's union. Absent in the spec's vectors. */
  productVersion?: string;
};

/** What codex_outcome may answer: a SubagentResult's fields and the replies, by shape only. Which stop reason, output, diagnostic and replies are right is the oracle's to judge, so that a wrong value is blamed on the requirement it breaks rather than on the adapter protocol; #/$defs/expected is the stricter shape of the spec's own vectors. */
export type CodexOutcome = {
  stopReason: "completed" | "aborted" | "error" | "max-tokens" | "refusal";
  output: CodexTextBlock[];
  diagnostic?: string;
  replies: CodexReply[];
};

export type ClaudeCodeEvent = {
  message: ClaudeCodeSdkMessage;
} | {
  callback: "canUseTool" | "onElicitation" | "onUserDialog";
  /** What the SDK passed to the callback (tool name and input, the elicitation request, the dialog payload): raw product data the provider must never copy. */
  arguments?: {
    [key: string]: unknown;
  };
};

export type ClaudeCodeProcessOutcome = {
  exitCode: number | null;
  signal: ("SIGHUP" | "SIGINT" | "SIGQUIT" | "SIGILL" | "SIGTRAP" | "SIGABRT" | "SIGBUS" | "SIGFPE" | "SIGKILL" | "SIGUSR1" | "SIGSEGV" | "SIGUSR2" | "SIGPIPE" | "SIGALRM" | "SIGTERM" | "SIGSTKFLT" | "SIGCHLD" | "SIGCONT" | "SIGSTOP" | "SIGTSTP" | "SIGTTIN" | "SIGTTOU" | "SIGURG" | "SIGXCPU" | "SIGXFSZ" | "SIGVTALRM" | "SIGPROF" | "SIGWINCH" | "SIGIO" | "SIGPWR" | "SIGSYS") | null;
};

export type ClaudeCodeTextBlock = {
  type: "text";
  text: string;
};

/** One observation of a published Codex run (table outcome_vectors). */
export type CodexEvent = {
  turn_start: {
    result: unknown;
  } | {
    error: {
      [key: string]: unknown;
    };
  };
} | {
  frame: unknown;
} | {
  line: string;
} | {
  stderr: string;
} | {
  stdout_end: true;
} | {
  exit: CodexProcessOutcome;
} | {
  exit_unobservable: true;
};

export type CodexTextBlock = {
  type: "text";
  text: string;
};

export type CodexReply = {
  id: string | number;
  result: {
    [key: string]: unknown;
  };
} | {
  id: string | number;
  error: {
    code: -32603;
    /** The error message M of CDX-035: any text the provider chooses, never compared; like every provider text it carries no raw product text (CDX-072). */
    message?: string;
  };
};

/** An SDK message as the provider observes it: any JSON object with a string `type`; result messages may be malformed on purpose. */
export type ClaudeCodeSdkMessage = {
  type: string;
  [key: string]: unknown;
};

export type CodexProcessOutcome = {
  exitCode: number | null;
  signal: ("SIGHUP" | "SIGINT" | "SIGQUIT" | "SIGILL" | "SIGTRAP" | "SIGABRT" | "SIGBUS" | "SIGFPE" | "SIGKILL" | "SIGUSR1" | "SIGSEGV" | "SIGUSR2" | "SIGPIPE" | "SIGALRM" | "SIGTERM" | "SIGSTKFLT" | "SIGCHLD" | "SIGCONT" | "SIGSTOP" | "SIGTSTP" | "SIGTTIN" | "SIGTTOU" | "SIGURG" | "SIGXCPU" | "SIGXFSZ" | "SIGVTALRM" | "SIGPROF" | "SIGWINCH" | "SIGIO" | "SIGPWR" | "SIGSYS") | null;
};

/** Every operation an adapter may implement: its name, its input and its output. */
export interface Operations {
  describe(input: DescribeInput): DescribeOutput;
  select_output(input: SelectOutputInput): SelectOutputOutput;
  fold_output(input: FoldOutputInput): FoldOutputOutput;
  settle_run(input: SettleRunInput): SettleRunOutput;
  render_tool_result(input: RenderToolResultInput): RenderToolResultOutput;
  job_outcome(input: JobOutcomeInput): JobOutcomeOutput;
  job_output(input: JobOutputInput): JobOutputOutput;
  job_notice(input: JobNoticeInput): JobNoticeOutput;
  settlement_notice(input: SettlementNoticeInput): SettlementNoticeOutput;
  format_diagnostic(input: FormatDiagnosticInput): FormatDiagnosticOutput;
  bound_diagnostic(input: BoundDiagnosticInput): BoundDiagnosticOutput;
  claude_code_outcome(input: ClaudeCodeOutcomeInput): ClaudeCodeOutcomeOutput;
  codex_outcome(input: CodexOutcomeInput): CodexOutcomeOutput;
  run_claude_code(input: RunClaudeCodeInput): RunClaudeCodeOutput;
  run_codex(input: RunCodexInput): RunCodexOutput;
}
