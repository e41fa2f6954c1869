{#-- DDL of hoodpy tables: `create table ... using hoodpy` run by hoodpy's SQL layer; everything else is
     dbt-spark's. The adapter validates the node's config (adapter.hoodpy_table_spec). --#}

{% macro hoodpy__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary or language != 'sql' -%}
    {{ return(spark__create_table_as(temporary, relation, compiled_code, language)) }}
  {%- endif -%}
  {%- set record_key = hoodpy_snapshot_record_key() -%}
  {%- set spec = adapter.hoodpy_table_spec(model, none, record_key) -%}
  {%- if not spec.is_hoodpy -%}
    {{ return(spark__create_table_as(temporary, relation, compiled_code, language)) }}
  {%- endif -%}
  {%- set columns = get_columns_in_query(compiled_code) -%}
  {%- set spec = adapter.hoodpy_table_spec(model, columns, record_key) -%}
  create table {{ relation }}
  {{ adapter.hoodpy_create_options(spec) }}
  {{ comment_clause() }}
  as
  {%- if spec.delete_column %}
  select {% for c in columns if c | lower != spec.delete_column | lower %}`{{ c }}`{{ ', ' if not loop.last }}{% endfor %}
  from ({{ compiled_code }}) as __hoodpy_source
  where not coalesce(cast(`{{ spec.delete_column }}` as boolean), false)
  {%- else %}
  {{ compiled_code }}
  {%- endif %}
{%- endmacro %}


{#-- Snapshots key their hoodpy table by dbt_scd_id (one row per version); models by unique_key. --#}
{% macro hoodpy_snapshot_record_key() -%}
  {%- if model.resource_type == 'snapshot' -%}
    {%- set names = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {{ return([names.dbt_scd_id]) }}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}


{#-- A hoodpy table's files live under its own base path: DROP ... PURGE removes them with the catalog entry,
     so a rebuilt model starts from an empty table. --#}
{% macro hoodpy__drop_relation(relation) -%}
  {% call statement('drop_relation', auto_begin=False) -%}
    {%- if relation.type == 'view' -%}
      drop view if exists {{ relation }}
    {%- else -%}
      drop table if exists {{ relation }} purge
    {%- endif -%}
  {%- endcall %}
{% endmacro %}


{#-- on_schema_change for hoodpy tables: new columns enter the catalog here and the table's schema with the
     next write; dropped columns need a rebuild (Hudi never drops a column). --#}
{% macro hoodpy__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {%- if not relation.is_hoodpy -%}
    {{ return(spark__alter_relation_add_remove_columns(relation, add_columns, remove_columns)) }}
  {%- endif -%}
  {%- if remove_columns -%}
    {% do adapter.hoodpy_rebuild_without(relation, remove_columns | map(attribute='name') | list, model) %}
  {%- endif -%}
  {%- if add_columns -%}
    {% call statement('add_columns') %}
      alter table {{ relation }} add columns (
        {%- for column in add_columns %}
        {{ column.quoted }} {{ column.data_type }}{{ ',' if not loop.last }}
        {%- endfor %}
      )
    {% endcall %}
  {%- endif -%}
{% endmacro %}


{#-- A hoodpy table's column types change with its writes (Hudi's promotion, checked by the incremental
     materialization through adapter.hoodpy_check_column_types), never by ALTER COLUMN. --#}
{% macro hoodpy__alter_column_type(relation, column_name, new_column_type) -%}
  {%- if not relation.is_hoodpy -%}
    {{ return(spark__alter_column_type(relation, column_name, new_column_type)) }}
  {%- endif -%}
{%- endmacro %}


{#-- A query over hoodpy tables returns their _hoodie_* meta columns too; they are the table's, never the
     model's (dbt's column lists for check_cols='all', contracts and CTAS columns must not see them). --#}
{% macro hoodpy__get_columns_in_query(select_sql) %}
  {% call statement('get_columns_in_query', fetch_result=True, auto_begin=False) -%}
    {{ get_empty_subquery_sql(select_sql) }}
  {% endcall %}
  {%- set names = load_result('get_columns_in_query').table.columns | map(attribute='name') | list -%}
  {{ return(names | reject('in', adapter.hoodpy_meta_columns()) | list) }}
{% endmacro %}
