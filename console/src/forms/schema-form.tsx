import type { Json } from "../api/types.js";

/**
 * A form generated from a JSON Schema (an approval's `responseSchema`): text and
 * number inputs, a select for `enum`, a checkbox for booleans, a fieldset per
 * nested object and a list of inputs for arrays of simple values. The server
 * validates the answer (ajv, draft 2020-12); this only makes it easy to give.
 */

type Schema = { [key: string]: Json };

function asSchema(value: Json | undefined): Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
}

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  if (schema.properties) return "object";
  return undefined;
}

/** The starting value of a form: each field's `default`, objects filled in. */
export function initialValue(schemaJson: Json): Json {
  const schema = asSchema(schemaJson);
  if (schema.default !== undefined) return schema.default;
  if (typeOf(schema) === "object") {
    const out: { [key: string]: Json } = {};
    for (const [name, sub] of Object.entries(asSchema(schema.properties))) {
      const v = initialValue(sub);
      if (v !== null) out[name] = v;
    }
    return out;
  }
  if (typeOf(schema) === "array") return [];
  if (typeOf(schema) === "boolean") return false;
  return null;
}

function set(obj: Json, key: string, value: Json | undefined): Json {
  const base = obj !== null && typeof obj === "object" && !Array.isArray(obj) ? { ...obj } : {};
  if (value === undefined) delete base[key];
  else base[key] = value;
  return base;
}

export function SchemaForm(props: {
  schema: Json;
  value: Json;
  onChange: (value: Json) => void;
  id: string;
}) {
  return (
    <div class="schema-form">
      <Field
        schema={asSchema(props.schema)}
        value={props.value}
        onChange={(v) => props.onChange(v ?? null)}
        id={props.id}
      />
    </div>
  );
}

function Field(props: {
  schema: Schema;
  name?: string;
  required?: boolean;
  value: Json | undefined;
  onChange: (value: Json | undefined) => void;
  id: string;
}) {
  const { schema, name, value, onChange, id } = props;
  const label = typeof schema.title === "string" ? schema.title : (name ?? "");
  const hint = typeof schema.description === "string" ? schema.description : undefined;
  const type = typeOf(schema);
  const caption = (
    <>
      {label}
      {props.required ? <span aria-hidden="true"> *</span> : null}
    </>
  );
  const help = hint ? <small class="muted">{hint}</small> : null;

  if (type === "object") {
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const fields = Object.entries(asSchema(schema.properties)).map(([key, sub]) => (
      <Field
        key={key}
        schema={asSchema(sub)}
        name={key}
        required={required.includes(key)}
        value={
          value !== null && typeof value === "object" && !Array.isArray(value)
            ? value[key]
            : undefined
        }
        onChange={(v) => onChange(set(value ?? {}, key, v))}
        id={`${id}-${key}`}
      />
    ));
    if (name === undefined) return <>{fields}</>;
    return (
      <fieldset class="form-group" data-field={name}>
        <legend>{caption}</legend>
        {help}
        {fields}
      </fieldset>
    );
  }

  if (Array.isArray(schema.enum)) {
    const options = schema.enum;
    const index = options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
    return (
      <div class="form-field" data-field={name}>
        <label for={id}>{caption}</label>
        <select
          id={id}
          name={name}
          value={index < 0 ? "" : String(index)}
          onChange={(e) => {
            const i = (e.target as HTMLSelectElement).value;
            onChange(i === "" ? undefined : options[Number(i)]);
          }}
        >
          <option value="">Choose…</option>
          {options.map((o, i) => (
            <option key={i} value={String(i)}>
              {typeof o === "string" ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
        {help}
      </div>
    );
  }

  if (type === "boolean") {
    return (
      <div class="form-field checkbox" data-field={name}>
        <label for={id}>
          <input
            id={id}
            name={name}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
          />{" "}
          {caption}
        </label>
        {help}
      </div>
    );
  }

  if (type === "array") {
    const items = Array.isArray(value) ? value : [];
    const itemSchema = asSchema(schema.items);
    return (
      <fieldset class="form-group" data-field={name}>
        <legend>{caption}</legend>
        {help}
        <ul class="plain array-items">
          {items.map((item, i) => (
            <li key={i}>
              <Scalar
                schema={itemSchema}
                value={item}
                label={`${label} ${i + 1}`}
                id={`${id}-${i}`}
                onChange={(v) => {
                  const next = [...items];
                  next[i] = v === undefined ? null : v;
                  onChange(next);
                }}
              />
              <button
                type="button"
                class="link"
                onClick={() => onChange(items.filter((_, j) => j !== i))}
                aria-label={`Remove ${label} ${i + 1}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        <button
          type="button"
          onClick={() => onChange([...items, typeOf(itemSchema) === "boolean" ? false : null])}
        >
          Add {label}
        </button>
      </fieldset>
    );
  }

  return (
    <div class="form-field" data-field={name}>
      <label for={id}>{caption}</label>
      <Scalar
        schema={schema}
        value={value}
        id={id}
        onChange={onChange}
        {...(name ? { name } : {})}
      />
      {help}
    </div>
  );
}

/** One text, number, select or checkbox input (an array's item, or a simple field). */
function Scalar(props: {
  schema: Schema;
  value: Json | undefined;
  onChange: (value: Json | undefined) => void;
  id: string;
  name?: string;
  label?: string;
}) {
  const { schema, value, onChange, id } = props;
  const type = typeOf(schema);
  if (Array.isArray(schema.enum)) {
    const options = schema.enum;
    const index = options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
    return (
      <select
        id={id}
        aria-label={props.label}
        value={index < 0 ? "" : String(index)}
        onChange={(e) => {
          const i = (e.target as HTMLSelectElement).value;
          onChange(i === "" ? undefined : options[Number(i)]);
        }}
      >
        <option value="">Choose…</option>
        {options.map((o, i) => (
          <option key={i} value={String(i)}>
            {typeof o === "string" ? o : JSON.stringify(o)}
          </option>
        ))}
      </select>
    );
  }
  if (type === "boolean") {
    return (
      <input
        id={id}
        type="checkbox"
        aria-label={props.label}
        checked={value === true}
        onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
      />
    );
  }
  if (type === "number" || type === "integer") {
    return (
      <input
        id={id}
        name={props.name}
        type="number"
        inputMode={type === "integer" ? "numeric" : "decimal"}
        step={type === "integer" ? "1" : "any"}
        aria-label={props.label}
        value={typeof value === "number" ? String(value) : ""}
        onInput={(e) => {
          const text = (e.target as HTMLInputElement).value;
          onChange(text === "" ? undefined : Number(text));
        }}
      />
    );
  }
  return (
    <input
      id={id}
      name={props.name}
      type="text"
      aria-label={props.label}
      {...(typeof schema.maxLength === "number" ? { maxLength: schema.maxLength } : {})}
      value={typeof value === "string" ? value : ""}
      onInput={(e) => {
        const text = (e.target as HTMLInputElement).value;
        onChange(text === "" ? undefined : text);
      }}
    />
  );
}
