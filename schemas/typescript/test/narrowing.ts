// The README's examples, compiled by `tsc --noEmit -p schemas/typescript`: narrowing a message on
// its discriminating field gives the agent output its own type (a switch that missed a case would
// not compile: the function could end without returning).
import type { CouldNotGround, GroundedAnswer, Proposal, RegenerateRequest } from "../src/index.js";

export function headline(message: GroundedAnswer): string {
  switch (message.kind) {
    case "answer":
      return message.output.answer_markdown; // output: AnalystAnswer
    case "proposal":
      return message.output.summary; // output: Proposal
    case "report":
      return message.output.title; // output: ReportDraft
  }
}

export function proposalTarget(proposal: Proposal): string {
  switch (proposal.proposal_type) {
    case "case_update":
      return proposal.patch.case_id;
    case "report_section":
      return proposal.patch.report_id;
    case "source_mapping":
      return proposal.patch.source_id;
    case "entity_flag":
      return proposal.patch.entity_id;
    case "adjudication":
      return proposal.patch.subject_id;
  }
}

export function patchTarget(proposal: Proposal): string | undefined {
  return proposal.proposal_type === "entity_flag" ? proposal.patch.entity_id : undefined;
}

export function previousAnswer(request: RegenerateRequest): string | undefined {
  return request.kind === "answer" ? request.previous_output?.answer_markdown : undefined;
}

export function reasonCodes(message: GroundedAnswer | CouldNotGround): string[] {
  return message.status === "could_not_ground" ? message.reasons.map((reason) => reason.code) : [];
}
