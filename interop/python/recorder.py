"""Client-side callbacks for the interop contract; they record what the server sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientRequestContext


def text_of(content: Any) -> str | None:
    """Text of a single text block, or of a one-element list of blocks; None otherwise."""
    if isinstance(content, list):
        if len(content) != 1:
            return None
        content = content[0]
    return content.text if isinstance(content, types.TextContent) else None


@dataclass
class Recorder:
    sampling_requests: list[types.CreateMessageRequestParams] = field(default_factory=list)
    elicitation_requests: list[types.ElicitRequestParams] = field(default_factory=list)
    # Queued answers for elicitation/create; once empty, every request is cancelled.
    elicitation_answers: list[types.ElicitResult] = field(default_factory=list)
    logs: list[types.LoggingMessageNotificationParams] = field(default_factory=list)
    progress: list[tuple[float, float | None]] = field(default_factory=list)

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling_requests.append(params)
        last = text_of(params.messages[-1].content) if params.messages else None
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled: {last}"),
            model="interop-model",
            stop_reason="endTurn",
        )

    async def elicitation(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitation_requests.append(params)
        if self.elicitation_answers:
            return self.elicitation_answers.pop(0)
        return types.ElicitResult(action="cancel")

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total))

    async def settle_logs(self, want: int, timeout: float = 1.0) -> None:
        """Wait until `want` log messages arrived (or `timeout`), then a short grace for extras."""
        with anyio.move_on_after(timeout):
            while len(self.logs) < want:
                await anyio.sleep(0.02)
        await anyio.sleep(0.2)
