{#-- dbt snapshots as hoodpy tables keyed by dbt_scd_id: the first run bulk-inserts, later runs MERGE the
     staged changes (closed versions update dbt_valid_to, new versions insert), one upsert commit each.
     The staging relation is a temporary view: it reads the snapshot table, which a persistent Spark view
     could not. --#}

{% macro hoodpy_build_snapshot_staging_table(strategy, sql, target_relation) %}
  {%- set tmp_relation = make_temp_relation(target_relation, '__dbt_snapshot_staging').incorporate(type='view') -%}
  {%- set select = snapshot_staging_table(strategy, sql, target_relation) -%}
  {% call statement('build_snapshot_staging_relation') %}
    {{ create_table_as(True, tmp_relation, select) }}
  {% endcall %}
  {% do return(tmp_relation) %}
{% endmacro %}


{% materialization snapshot, adapter='hoodpy' %}
  {%- set target_table = model.get('alias', model.get('name')) -%}
  {%- set strategy_name = config.get('strategy') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set spec = adapter.hoodpy_table_spec(model, none, hoodpy_snapshot_record_key()) -%}
  {%- if not spec.is_hoodpy -%}
    {% do exceptions.raise_compiler_error("hoodpy snapshots are hoodpy tables (upserts by dbt_scd_id); snapshot '"
                                          ~ target_table ~ "' has file_format '" ~ spec.file_format ~ "'") %}
  {%- endif -%}

  {% set target_relation_exists, target_relation = get_or_create_relation(
          database=none, schema=model.schema, identifier=target_table, type='table') -%}

  {%- if target_relation_exists and not target_relation.is_hoodpy -%}
    {% do exceptions.raise_compiler_error("The existing table " ~ target_relation ~ " is not a hoodpy table; drop it "
                                          ~ "to snapshot into it with hoodpy") %}
  {%- endif -%}

  {% if not adapter.check_schema_exists(model.database, model.schema) %}
    {% do create_schema(model.schema) %}
  {% endif %}

  {{ run_hooks(pre_hooks) }}

  {% set strategy_macro = strategy_dispatch(strategy_name) %}
  {% set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) %}

  {% if not target_relation_exists %}
    {% set build_sql = build_snapshot_table(strategy, model['compiled_code']) %}
    {% set final_sql = create_table_as(False, target_relation, build_sql) %}
  {% else %}
    {% set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() %}
    {{ adapter.valid_snapshot_target(target_relation, columns) }}
    {% set staging_table = hoodpy_build_snapshot_staging_table(strategy, sql, target_relation) %}
    {% set missing_columns = adapter.get_missing_columns(staging_table, target_relation)
                             | rejectattr('name', 'equalto', 'dbt_change_type')
                             | rejectattr('name', 'equalto', 'DBT_CHANGE_TYPE')
                             | rejectattr('name', 'equalto', 'dbt_unique_key')
                             | rejectattr('name', 'equalto', 'DBT_UNIQUE_KEY')
                             | list %}
    {% do create_columns(target_relation, missing_columns) %}
    {% set source_columns = adapter.get_columns_in_relation(staging_table)
                            | rejectattr('name', 'equalto', 'dbt_change_type')
                            | rejectattr('name', 'equalto', 'DBT_CHANGE_TYPE')
                            | rejectattr('name', 'equalto', 'dbt_unique_key')
                            | rejectattr('name', 'equalto', 'DBT_UNIQUE_KEY')
                            | list %}
    {% set quoted_source_columns = [] %}
    {% for column in source_columns %}
      {% do quoted_source_columns.append(adapter.quote(column.name)) %}
    {% endfor %}
    {% set final_sql = snapshot_merge_sql(target=target_relation, source=staging_table,
                                          insert_cols=quoted_source_columns) %}
  {% endif %}

  {% call statement('main') %}
    {{ final_sql }}
  {% endcall %}

  {% set should_revoke = should_revoke(target_relation_exists, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {% if staging_table is defined %}
    {% do adapter.drop_relation(staging_table) %}
  {% endif %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
