/** 1-based line and column of a place in a source text (columns count UTF-16 units). */
export interface Position {
  line: number;
  column: number;
}

/** Maps character offsets to line/column; the line table is built on first use. */
export class LineIndex {
  #starts: number[] | undefined;

  constructor(private readonly text: string) {}

  position(offset: number): Position {
    const starts = (this.#starts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // \r\n counts once; a lone \r ends a line too (YAML and JSON both allow it).
    if (c === 10) starts.push(i + 1);
    else if (c === 13 && text.charCodeAt(i + 1) !== 10) starts.push(i + 1);
  }
  return starts;
}
