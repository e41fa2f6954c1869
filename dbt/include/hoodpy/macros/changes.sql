{#-- Read only what an upstream hoodpy model committed since this incremental model last read it:

       select ... from {{ hoodpy_changes(ref('rides')) }} as r

     On an incremental run: Hudi's incremental query, hudi_table_changes(<upstream>, 'latest_state', S, E),
     the latest version of each record committed after S (the upstream instant this model's last commit
     consumed) up to E (the upstream's newest commit, chosen before reading). On a first or --full-refresh
     run: the upstream as of E. The model's write stores E in its own commit (extraMetadata key
     _hoodpy.changes.<schema>.<table>), so a failed run reads the same window again and a successful one
     never reads it twice. In a table or view model: the upstream itself.
     hoodpy_changes(ref('rides'), format='cdc') reads change data capture rows instead (op, ts_ms, before,
     after; the upstream needs hoodie.table.cdc.enabled): hudi_table_changes(<upstream>, 'cdc', S, E) with the
     same checkpoint; every change up to E on a first or --full-refresh run (and in a table or view model).
     The work is the adapter's (dbt/adapters/hoodpy/changes.py). --#}
{% macro hoodpy_changes(relation, format='latest_state') -%}
  {{- return(adapter.hoodpy_changes(model, this, relation, is_incremental(), format)) -}}
{%- endmacro %}
