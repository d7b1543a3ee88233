// The live probe: read-only calls against a team's own account API or local manager, every answer held
// to the published bundle, a report with every secret redacted. The command is `zone-api-probe` (cli.ts).
export {
  BODY_KEPT,
  type Exchange,
  type Finding,
  type FindingKind,
  type ProbeOptions,
  type ProbeResult,
  pace,
  readsOnly,
  runProbe,
  type Skipped,
} from './probe.js';
export { encodings, Redactor, redactIps, type SecretKind } from './redact.js';
export {
  type AnswerShape,
  compareShapes,
  type Difference,
  type RecordedAnswer,
  type ReferenceAnswers,
  sameShape,
  shapeOf,
} from './reference.js';
export { type Report, renderReport } from './report.js';
