import type { ComponentChildren } from "preact";
import { navigate } from "../router.js";

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link(props: { href: string; class?: string; children: ComponentChildren }) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={onClick}>
      {props.children}
    </a>
  );
}
