{#-- Seeds are Spark tables unless configured as hoodpy tables (+file_format: hoodpy with a unique_key): then the
     table is created `using hoodpy` and the rows arrive with one INSERT INTO (an upsert by key). --#}
{% macro hoodpy__create_csv_table(model, agate_table) %}
  {%- set spec = adapter.hoodpy_table_spec(model, agate_table.column_names | map('string') | list) -%}
  {%- if not spec.is_hoodpy -%}
    {{ return(spark__create_csv_table(model, agate_table)) }}
  {%- endif -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {% set sql %}
    create table {{ this.render() }} (
        {%- for col_name in agate_table.column_names -%}
            {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
            {%- set type = column_override.get(col_name, inferred_type) -%}
            {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }} {{ type }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    )
    {{ adapter.hoodpy_create_options(spec) }}
    {{ comment_clause() }}
  {% endset %}
  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}
  {{ return(sql) }}
{% endmacro %}
